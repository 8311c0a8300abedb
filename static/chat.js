// The table chat's extras (the chat works without them): the unread count on its folded
// bar, the newest message kept in view.
(() => {
  "use strict";
  const d = document;
  const key = "skymo-chat-seen:" + location.pathname;
  const store = {
    get() { try { return +(localStorage.getItem(key) || 0); } catch { return 0; } },
    set(v) { try { localStorage.setItem(key, String(v)); } catch { /* private mode */ } },
  };

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
    const seen = store.get();
    const unread = [...log.children].filter((li) => +li.dataset.id > seen).length;
    badge.querySelector("[data-count]").textContent = unread;
    badge.hidden = unread === 0;
  }

  d.addEventListener("toggle", (e) => { if (e.target.closest?.("#chat")) update(); }, true);
  d.addEventListener("htmx:wsAfterMessage", update);
  d.addEventListener("htmx:afterSettle", update);
  update();
})();
