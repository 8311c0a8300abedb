// The table chat's extras (the chat works without them): the unread count on its folded
// bar, the newest message kept in view, the bar left open or folded as the player left it.
(() => {
  "use strict";
  const d = document;
  const kept = (name) => ({
    get() { try { return localStorage.getItem(name + location.pathname); } catch { return null; } },
    set(v) { try { localStorage.setItem(name + location.pathname, String(v)); } catch { /* private mode */ } },
  });
  const seen = kept("skymo-chat-seen:");
  const unfolded = kept("skymo-chat-open:");
  const store = { get: () => +(seen.get() || 0), set: (v) => seen.set(v) };

  function update() {
    const chat = d.getElementById("chat");
    const log = d.getElementById("chat-log");
    if (!chat || !log) return;
    const fold = chat.querySelector("details");
    const badge = chat.querySelector("[data-chat-unread]");
    const newest = +(log.lastElementChild?.dataset.id || 0);
    if (fold.open) {
      if (newest > store.get()) store.set(newest);
      log.scrollTop = log.scrollHeight;
      badge.hidden = true;
      return;
    }
    const last = store.get();
    const unread = [...log.children].filter((li) => +li.dataset.id > last).length;
    badge.querySelector("[data-count]").textContent = unread;
    badge.hidden = unread === 0;
  }

  d.addEventListener("toggle", (e) => {
    if (!e.target.matches?.("#chat details")) return;
    unfolded.set(e.target.open ? "1" : "0");
    update();
  }, true);
  const fold = d.querySelector("#chat details");
  if (fold && unfolded.get() === "1") fold.open = true;
  d.addEventListener("htmx:wsAfterMessage", update);
  d.addEventListener("htmx:afterSettle", update);
  update();
})();
