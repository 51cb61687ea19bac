// FilePond 4 (Panel's FileDropper) redraws every FilePond of the page 60 times a second for as long as the page is
// open, from the moment its script loads, even with nothing to draw (pqina/filepond#243): each redraw asks Chromium
// for an animation frame, about 7 % of a core per idle page. FilePond joins a painter it finds on
// window.__framePainter instead of starting its own loop: this one redraws on every frame while the page is in use
// (an input, a drag or a FilePond event in the last 2 s) and a FilePond is shown, and 4 times a second otherwise
// (as FilePond's own loop does on a hidden page, with timers instead of frames).
(() => {
  if (window.__framePainter) return;
  const painter = (window.__framePainter = { readers: [], writers: [], quiet: true });
  const roots = new Set();
  let lastActive = performance.now();
  const active = () => (lastActive = performance.now());
  document.addEventListener("FilePond:init", (event) => roots.add(event.composedPath()[0]));
  for (const type of ["pointerdown", "pointermove", "keydown", "dragenter", "dragover", "drop", "input", "change",
                      "FilePond:addfilestart", "FilePond:addfileprogress", "FilePond:addfile", "FilePond:processfilestart",
                      "FilePond:processfileprogress", "FilePond:processfile", "FilePond:removefile",
                      "FilePond:updatefiles", "FilePond:warning", "FilePond:error"])
    document.addEventListener(type, active, { capture: true, passive: true });
  const shown = () => {
    for (const root of roots) {
      if (!root.isConnected) roots.delete(root);
      else if (root.checkVisibility()) return true;
    }
    return false;
  };
  const paint = (time) => {
    painter.readers.forEach((read) => read());
    painter.writers.forEach((write) => write(time));
    if (!document.hidden && performance.now() - lastActive < 2000 && shown()) requestAnimationFrame(paint);
    else setTimeout(() => paint(performance.now()), 250);
  };
  paint(performance.now());
})();
