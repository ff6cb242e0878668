// The static edition's live panels: each panel's first picture, drawn from the numbers saved
// with the notebook (its widget state) by the same ES module that draws it in JupyterLab
// (attention_helpers/browser_view.js, inlined above this code). Without a kernel nothing
// moves, so the model is a stand-in that only answers get(); without JavaScript the
// picture saved beside it (a PNG with its alt text) stays in its place.
const saved = JSON.parse(document.getElementById("ah-views").textContent);
const bytes = (b64) => {
  const raw = atob(b64), out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return new DataView(out.buffer);
};
for (const holder of document.querySelectorAll(".ah-static-panel[data-view]")) {
  const state = saved[holder.dataset.view];
  if (!state) continue;
  const traits = {...state, values: bytes(state.values)};
  const model = {get: (k) => traits[k], set() {}, save_changes() {}, send() {}, on() {}, off() {}};
  const el = document.createElement("div");
  try {
    render({model, el});
    holder.querySelector(".ah-fallback")?.remove();
    holder.appendChild(el);
  } catch (err) {
    console.error("a panel's picture could not be drawn; the saved picture stays", err);
  }
}
