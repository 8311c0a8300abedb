// The lobby's extras, loaded by static/skymo-1.js the first time one is used: copying
// and sharing the invite, and counting a name's characters as a person sees them
// (grapheme clusters), as the server does.

export function checkName(input) {
  const max = +input.dataset.graphemes;
  const n = window.Intl && Intl.Segmenter
    ? [...new Intl.Segmenter().segment(input.value.trim())].length
    : [...input.value.trim()].length;
  input.setCustomValidity(n > max ? input.dataset.tooLong : "");
}

export async function copy(button) {
  const input = document.getElementById(button.dataset.copy);
  const say = document.getElementById(button.dataset.copy + "-said");
  let ok = false;
  try {
    await navigator.clipboard.writeText(input.value);
    ok = true;
  } catch (e) {
    // Plain http (a local network game) has no clipboard API: select and copy.
    input.focus();
    input.select();
    input.setSelectionRange(0, input.value.length);
    try { ok = document.execCommand("copy"); } catch (e2) { ok = false; }
  }
  say.textContent = ok ? button.dataset.done : button.dataset.fail;
}

export function share(button) {
  const input = document.getElementById(button.dataset.share);
  navigator.share({ title: button.dataset.title, url: input.value }).catch(() => {});
}
