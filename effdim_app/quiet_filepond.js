// FilePond 4 (Panel's FileDropper) redraws every FilePond of the page 60 times a second for as long as the page is
// open, from the moment its script loads, even with nothing to draw (pqina/filepond#243): each redraw asks Chromium
// for an animation frame, about 7 % of a core per idle page. FilePond joins a painter it finds on
// window.__framePainter instead of starting its own loop: this one redraws on every frame while the page is in use
// (an input, a drag or a FilePond event in the last 2 s) and a FilePond is shown, and 4 times a second otherwise
// (as FilePond's own loop does on a hidden page, with timers instead of frames). An input wakes it at once, not at
// its next quiet redraw (up to 250 ms later).
//
// FilePond also holds back its queued work, the upload of a chosen file among it, until its animations have come
// to rest, and its springs move one step per redraw: at one redraw a frame a 180-byte file left for the server
// 1.2 s after FilePond had added it. While the page is in use the painter redraws FilePond STEPS times a frame on a
// clock that runs STEPS times as fast, so its animations play that much faster and the file leaves about 0.15 s
// after it was added (docs/dashboard.md, "An upload's first second").
(() => {
  if (window.__framePainter) return;
  const painter = (window.__framePainter = { readers: [], writers: [], quiet: true });
  const STEPS = 8;
  const QUIET_MS = 250;
  const roots = new Set();
  let lastActive = performance.now();
  let quietTimer = null; // the next quiet redraw, while the page is not in use
  let lastFrame = null;
  let clock = 0; // FilePond's clock: as the page's while quiet, STEPS times as fast while in use
  document.addEventListener("FilePond:init", (event) => roots.add(event.composedPath()[0]));
  const shown = () => {
    for (const root of roots) {
      if (!root.isConnected) roots.delete(root);
      else if (root.checkVisibility()) return true;
    }
    return false;
  };
  const inUse = () => !document.hidden && performance.now() - lastActive < 2000 && shown();
  const redraw = (elapsed) => {
    clock += elapsed;
    painter.readers.forEach((read) => read());
    painter.writers.forEach((write) => write(clock));
  };
  const paint = (time) => {
    quietTimer = null;
    const elapsed = lastFrame === null ? 0 : Math.max(0, time - lastFrame);
    lastFrame = time;
    const steps = inUse() ? STEPS : 1;
    for (let i = 0; i < steps; i++) redraw(elapsed);
    if (inUse()) requestAnimationFrame(paint);
    else quietTimer = setTimeout(() => paint(performance.now()), QUIET_MS);
  };
  const active = () => {
    lastActive = performance.now();
    if (quietTimer !== null && shown()) {
      clearTimeout(quietTimer);
      quietTimer = null;
      requestAnimationFrame(paint);
    }
  };
  for (const type of ["pointerdown", "pointermove", "keydown", "dragenter", "dragover", "drop", "input", "change",
                      "FilePond:addfilestart", "FilePond:addfileprogress", "FilePond:addfile", "FilePond:processfilestart",
                      "FilePond:processfileprogress", "FilePond:processfile", "FilePond:removefile",
                      "FilePond:updatefiles", "FilePond:warning", "FilePond:error"])
    document.addEventListener(type, active, { capture: true, passive: true });
  paint(performance.now());
})();
