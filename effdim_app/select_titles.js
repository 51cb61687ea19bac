// Every select box of the page shows its chosen option's whole text on hover (its title): a box narrower than a
// long option (a survey's question, a fitted model) cuts the text at its edge. Set when the pointer or the
// keyboard reaches the box, so it is current after every change; found through Panel's open shadow roots by the
// event's composed path. The pointer's moves count too: Chromium sends no "over" event when the page scrolled the box
// under a resting pointer. Loaded once per page with the file dropper's scripts
// (effdim_app/views/data_panel.py).
(() => {
  if (window.__effdimSelectTitles) return;
  window.__effdimSelectTitles = true;
  const title = (event) => {
    const box = event.composedPath()[0];
    if (!(box instanceof HTMLSelectElement)) return;
    const whole = [...box.selectedOptions].map((option) => option.textContent).join("\n");
    if (box.title !== whole) box.title = whole;
  };
  document.addEventListener("pointerover", title, true);
  document.addEventListener("pointermove", title, { capture: true, passive: true });
  document.addEventListener("focusin", title, true);
})();
