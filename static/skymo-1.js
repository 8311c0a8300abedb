// Skymo's few page extras over htmx. The game works without them (every action is a
// form); texts come from data- attributes the server translated.
(() => {
  const d = document;
  const me = d.currentScript;
  const title = d.title;
  const keep = {
    get: (k) => { try { return localStorage.getItem(k); } catch (e) { return null; } },
    set: (k, v) => { try { localStorage.setItem(k, v); } catch (e) { /* private mode */ } },
  };
  let wasTurn = false;
  let status = null;
  let round = null;
  let seen = new Map(); // "grid label|index" -> what the card showed

  // A short beep made here: no sound file, nothing loaded until sound is turned on.
  let audio = null;
  function beep() {
    if (keep.get("skymo-sound") !== "on") return;
    try {
      audio = audio || new AudioContext();
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      const t = audio.currentTime;
      osc.frequency.value = 660;
      gain.gain.setValueAtTime(0.2, t);
      gain.gain.exponentialRampToValueAtTime(0.001, t + 0.3);
      osc.connect(gain).connect(audio.destination);
      osc.start(t);
      osc.stop(t + 0.3);
    } catch (e) { /* no audio here */ }
  }

  function soundButton() {
    const b = d.querySelector("[data-sound]");
    if (b) b.setAttribute("aria-pressed", keep.get("skymo-sound") === "on");
  }

  // Your turn: a marker in the tab's title, a buzz and the beep (once per turn).
  function turn(table) {
    const mine = table.dataset.turn === "1";
    d.title = mine ? "\u25CF " + table.dataset.turnTitle + " \u00B7 " + title : title;
    if (mine && !wasTurn) {
      if (navigator.vibrate && navigator.userActivation?.hasBeenActive) navigator.vibrate(200);
      beep();
    }
    wasTurn = mine;
  }

  function face(card) {
    if (card.classList.contains("back")) return "down";
    if (card.classList.contains("gone")) return "gone";
    return card.textContent.trim();
  }

  // Cards that changed since the last rendering: highlighted, flipped, swapped, cleared.
  function changes(table) {
    const board = table.querySelector(".board");
    const now = new Map();
    if (!board) { seen = now; round = null; return; }
    for (const grid of board.querySelectorAll(".grid")) {
      grid.querySelectorAll(".card").forEach((card, i) => {
        const key = grid.getAttribute("aria-label") + "|" + i;
        const was = seen.get(key);
        const is = face(card);
        now.set(key, is);
        if (board.dataset.round !== round || was === undefined || was === is) return;
        const how = is === "gone" ? "cleared" : was === "down" ? "flipped" : "swapped";
        card.classList.add("changed", how);
      });
    }
    seen = now;
    round = board.dataset.round;
    setTimeout(() => board.querySelectorAll(".changed").forEach((c) => c.classList.remove("changed")), 1600);
  }

  // Countdowns and reactions say how long they last; the clock runs here.
  function stamp(root) {
    for (const el of root.querySelectorAll("[data-left]")) el.t = Date.now();
  }
  setInterval(() => {
    for (const el of d.querySelectorAll("[data-left]")) {
      const left = Math.max(0, Math.ceil(el.dataset.left - (Date.now() - el.t) / 1000));
      if (el.dataset.until) { if (!left) el.remove(); } else el.textContent = left;
    }
  }, 500);

  function update() {
    const table = d.getElementById("table");
    if (!table) return;
    stamp(table);
    turn(table);
    changes(table);
    // After the game starts, the board is at the top of the view (the lobby was long).
    if (status === "lobby" && table.dataset.status !== "lobby") window.scrollTo(0, 0);
    status = table.dataset.status;
  }

  // Names are counted as a person sees characters (grapheme clusters), like the server.
  function checkName(input) {
    const max = +input.dataset.graphemes;
    const n = window.Intl && Intl.Segmenter
      ? [...new Intl.Segmenter().segment(input.value.trim())].length
      : [...input.value.trim()].length;
    input.setCustomValidity(n > max ? input.dataset.tooLong : "");
  }

  async function copy(button) {
    const input = d.getElementById(button.dataset.copy);
    const say = d.getElementById(button.dataset.copy + "-said");
    let ok = false;
    try {
      await navigator.clipboard.writeText(input.value);
      ok = true;
    } catch (e) {
      // Plain http (a local network game) has no clipboard API: select and copy.
      input.focus();
      input.select();
      input.setSelectionRange(0, input.value.length);
      try { ok = d.execCommand("copy"); } catch (e2) { ok = false; }
    }
    say.textContent = ok ? button.dataset.done : button.dataset.fail;
  }

  d.addEventListener("click", (e) => {
    const b = e.target.closest("[data-copy], [data-share], [data-sound]");
    if (!b) return;
    if (b.dataset.copy) copy(b);
    else if (b.hasAttribute("data-share")) {
      const input = d.getElementById(b.dataset.share);
      navigator.share({ title: b.dataset.title, url: input.value }).catch(() => {});
    } else {
      const on = keep.get("skymo-sound") !== "on";
      keep.set("skymo-sound", on ? "on" : "off");
      soundButton();
      beep();
    }
  });
  d.addEventListener("input", (e) => { if (e.target.dataset.graphemes) checkName(e.target); });

  function shareButtons() {
    if (!navigator.share) return;
    for (const b of d.querySelectorAll("[data-share][hidden]")) b.hidden = false;
  }

  // A refused form: its first wrong field gets the focus (and so comes into view).
  d.addEventListener("htmx:afterSettle", (e) => {
    if (e.detail.xhr?.status >= 400) d.querySelector("#table [aria-invalid=true]")?.focus();
  });
  d.addEventListener("invalid", (e) => { e.target.closest("details")?.setAttribute("open", ""); }, true);
  d.addEventListener("htmx:load", (e) => {
    if (e.target.closest?.("#table") || e.target.querySelector?.("#table")) update();
    shareButtons();
  });
  update();
  soundButton();
  shareButtons();
  if ("serviceWorker" in navigator && me?.dataset.sw) {
    navigator.serviceWorker.register(me.dataset.sw).catch(() => {});
  }
  // The table chat (its own block): the unread count on its folded bar, the newest line
  // in view, the bar left open or folded as the player left it (per table).
  {
    const seenKey = "skymo-chat-seen:" + location.pathname;
    const openKey = "skymo-chat-open:" + location.pathname;
    const chat = () => {
      const log = d.getElementById("chat-log"), fold = log?.closest("details");
      if (!fold) return;
      const badge = d.querySelector(".chat-unread"), seen = +keep.get(seenKey) || 0;
      const ids = [...log.children].map((li) => +li.id.slice(6)); // id="chat-m<number>"
      if (fold.open) {
        keep.set(seenKey, Math.max(seen, ...ids));
        log.scrollTop = log.scrollHeight;
      }
      const unread = fold.open ? 0 : ids.filter((id) => id > seen).length;
      badge.lastChild.textContent = unread;
      badge.hidden = !unread;
    };
    d.addEventListener("toggle", (e) => {
      if (!e.target.matches?.("#chat details")) return;
      keep.set(openKey, e.target.open ? 1 : 0);
      chat();
    }, true);
    const fold = d.querySelector("#chat details");
    if (fold && keep.get(openKey) === "1") fold.open = true;
    d.addEventListener("htmx:wsAfterMessage", chat);
    d.addEventListener("htmx:afterSettle", chat);
    chat();
  }
})();
