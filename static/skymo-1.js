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
  let drew = false; // a drawn card was showing
  let ended = false; // the round's results were showing

  // Game sounds: off until the player turns them on; their code (static/sounds-1.js)
  // is loaded the first time one is due.
  let sounds = null;
  function play(name) {
    if (keep.get("skymo-sound") !== "on" || !me?.dataset.sounds) return;
    const volume = (keep.get("skymo-volume") ?? 60) / 100;
    sounds = sounds || import(me.dataset.sounds);
    sounds.then((m) => m.play(name, volume)).catch(() => { sounds = null; });
  }

  // Turn alerts on this device: their code (static/push-1.js) loads when the switch
  // is used. The page tells its socket whether it is visible: alerts wait while it is.
  let socket;
  d.addEventListener("visibilitychange", () => socket?.send(d.visibilityState));

  function soundControls() {
    const on = keep.get("skymo-sound") === "on";
    for (const box of d.querySelectorAll("[data-sound]")) box.checked = on;
    for (const range of d.querySelectorAll("[data-volume]")) {
      range.value = keep.get("skymo-volume") ?? 60;
      range.disabled = !on;
    }
    for (const menu of d.querySelectorAll("[data-sound-menu][hidden]")) menu.hidden = false;
  }

  // Your turn: a marker in the tab's title, a buzz and a sound (once per turn).
  function turn(table) {
    const mine = table.dataset.turn === "1";
    d.title = mine ? "\u25CF " + table.dataset.turnTitle + " \u00B7 " + title : title;
    if (mine && !wasTurn) {
      if (navigator.vibrate && navigator.userActivation?.hasBeenActive) navigator.vibrate(200);
      play("turn");
    }
    wasTurn = mine;
  }

  function face(card) {
    if (card.classList.contains("back")) return "down";
    if (card.classList.contains("gone")) return "gone";
    return card.textContent.trim();
  }

  // Cards that changed since the last rendering: highlighted, flipped, swapped, cleared
  // (and heard, with sound on).
  function changes(table) {
    const board = table.querySelector(".board");
    const now = new Map();
    const heard = new Set();
    if (!board) { seen = now; round = null; drew = false; return; }
    for (const grid of board.querySelectorAll(".grid")) {
      grid.querySelectorAll(".card").forEach((card, i) => {
        const key = grid.getAttribute("aria-label") + "|" + i;
        const was = seen.get(key);
        const is = face(card);
        now.set(key, is);
        if (board.dataset.round !== round || was === undefined || was === is) return;
        const how = is === "gone" ? "cleared" : was === "down" ? "flipped" : "swapped";
        card.classList.add("changed", how);
        heard.add(how);
      });
    }
    const drawing = !!board.querySelector(".pile.drawn");
    if (drawing && !drew && board.dataset.round === round) heard.add("draw");
    drew = drawing;
    const over = /phase-(round|game)_over/.test(board.className);
    if (over && !ended && board.dataset.round === round) heard.add("round");
    ended = over;
    // One sound per rendering, the weightiest.
    const sound = ["round", "cleared", "flipped", "draw"].find((h) => heard.has(h));
    if (sound) play({ cleared: "clear", flipped: "flip" }[sound] || sound);
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

  // ----- Another way to play this turn, without asking the server -----------------
  // The server renders each mode the turn allows in a <template data-mode> (taking the
  // discard pile, turning a card over after discarding); choosing one swaps its banner,
  // piles and grid in, whose forms post as the server's own would. Without JavaScript
  // the links load the same from the server.
  let base = null; // the parts the server sent, while another mode shows
  let mode = "";
  let version = null;

  function choose(name) {
    const table = d.getElementById("table");
    if (!table) return false;
    let fresh = base;
    if (name) {
      const tpl = table.querySelector('template[data-mode="' + name + '"]');
      if (!tpl) return false;
      fresh = [...tpl.content.cloneNode(true).children];
    }
    if (!fresh) return false;
    const shown = [...table.querySelectorAll("[data-part]")];
    if (!base) base = shown;
    for (const part of fresh) {
      shown.find((el) => el.dataset.part === part.dataset.part)?.replaceWith(part);
      if (name) htmx.process(part);
    }
    if (!name) base = null;
    mode = name;
    return true;
  }

  // Caught before htmx's own handler: with no template to swap in (a whole page has
  // none), the link's request goes as it would.
  d.addEventListener("click", (e) => {
    const link = e.target.closest("#table a[data-mode]");
    if (!link || e.ctrlKey || e.metaKey || e.shiftKey || e.button) return;
    if (choose(link.dataset.mode)) {
      e.preventDefault();
      e.stopPropagation();
      focusNext(true);
    }
  }, true);

  // A push that changes nothing of the turn (someone came or went) keeps the mode.
  function keepMode(table) {
    const same = table.dataset.version === version;
    version = table.dataset.version;
    base = null;
    const was = mode;
    mode = "";
    if (same && was) choose(was);
  }

  // ----- Focus: after a move, on what comes next -----------------------------------
  let focusWasInTable = false;
  function noteFocus() {
    const table = d.getElementById("table");
    focusWasInTable = !!table && table.contains(d.activeElement);
  }
  d.addEventListener("htmx:beforeSwap", noteFocus);
  d.addEventListener("htmx:oobBeforeSwap", noteFocus);
  // Only when the focus was in the table (a swap took the focused control away) or the
  // player chose a mode: a push never takes the focus from anywhere else.
  function focusNext(always) {
    const table = d.getElementById("table");
    if (!table || !(always || focusWasInTable)) return;
    focusWasInTable = false;
    // In this order: a card to choose, the draw pile, the results' button, any action.
    const next = ["form.grid button.card", ".pile button", ".results button.primary", "[data-part=actions] .button"]
      .map((sel) => table.querySelector(sel)).find(Boolean);
    (next || table).focus({ preventScroll: true });
  }

  // ----- Pressing: shown at once, never twice --------------------------------------
  // htmx marks the form or link of a request in flight (htmx-request); the card or
  // button pressed is marked too. While a move is in flight the turn's other controls
  // send nothing (the server would refuse a second move of the same turn anyway).
  let moving = null;
  d.addEventListener("htmx:beforeRequest", (e) => {
    const elt = e.detail.elt;
    if (!elt.closest?.("#table")) return;
    if (!online) {
      e.preventDefault();
      tell(bar?.dataset.notSent);
      return;
    }
    if (moving && elt.closest("[data-part]")) {
      e.preventDefault();
      return;
    }
    const by = e.detail.requestConfig?.triggeringEvent?.submitter || elt;
    by.classList.add("pressed");
    by.setAttribute("aria-busy", "true");
    if (elt.closest("[data-part]")) moving = by;
  });
  d.addEventListener("htmx:afterRequest", (e) => {
    const by = moving;
    moving = null;
    by?.classList.remove("pressed");
    by?.removeAttribute("aria-busy");
    if (e.detail.failed && !e.detail.xhr?.status) {
      tell(bar?.dataset.failed); // no answer at all: the connection is the cause
      renew();
    }
  });

  // ----- The connection: a bar while the table's socket is down ---------------------
  // The server sends something at least every few seconds (an empty message when there
  // is nothing to push: the page cannot see the protocol's pings); a socket quiet for
  // longer is dead, however open it looks, and a fresh one replaces it.
  const QUIET = 8000;
  const bar = d.getElementById("connection");
  let online = true;
  let heard = Date.now();
  let dropping = null;

  function tell(text) {
    if (!bar || !text) return;
    bar.hidden = false;
    bar.textContent = text;
  }
  function down() {
    clearTimeout(dropping);
    dropping = null;
    if (!d.getElementById("live")) return;
    online = false;
    d.body.classList.add("offline");
    tell(bar?.dataset.down);
  }
  function up(e) {
    (socket = e.detail.socketWrapper).send(d.visibilityState);
    clearTimeout(dropping);
    dropping = null;
    heard = Date.now();
    online = true;
    d.body.classList.remove("offline");
    if (bar) bar.hidden = true;
  }
  // A new socket: #live again, as it is. The old element's socket is closed and never
  // reconnected by the extension (its element is gone), whatever state it is in.
  function renew() {
    const live = d.getElementById("live");
    if (!live || !window.htmx) return;
    const fresh = live.cloneNode(true);
    const shown = d.getElementById("table")?.dataset.version;
    const url = live.getAttribute("ws-connect");
    if (shown) fresh.setAttribute("ws-connect", url.replace(/([?&]v=)\d+/, "$1" + shown));
    live.replaceWith(fresh);
    htmx.process(fresh);
    heard = Date.now();
  }
  d.addEventListener("htmx:wsOpen", up);
  d.addEventListener("htmx:wsBeforeMessage", () => { heard = Date.now(); });
  d.addEventListener("htmx:wsClose", () => { if (online && !dropping) dropping = setTimeout(down, 1000); });
  window.addEventListener("offline", down);
  window.addEventListener("online", renew);
  setInterval(() => {
    if (d.getElementById("live") && Date.now() - heard > QUIET) {
      down();
      renew();
    }
  }, 500);

  function update() {
    const table = d.getElementById("table");
    if (!table) return;
    stamp(table);
    turn(table);
    changes(table);
    keepMode(table);
    focusNext(false);
    // After the game starts, the board is at the top of the view (the lobby was long).
    if (status === "lobby" && table.dataset.status !== "lobby") window.scrollTo(0, 0);
    status = table.dataset.status;
  }

  // The lobby's extras (static/lobby-1.js: copying and sharing the invite, counting a
  // name's characters as the server does), loaded the first time one is used.
  let lobby = null;
  const extras = () => (lobby = lobby || import(me.dataset.lobby));
  d.addEventListener("click", (e) => {
    const b = e.target.closest("[data-copy], [data-share]");
    if (b) extras().then((m) => (b.dataset.copy ? m.copy(b) : m.share(b)));
  });
  d.addEventListener("change", (e) => {
    if (e.target.matches("[data-sound]")) {
      keep.set("skymo-sound", e.target.checked ? "on" : "off");
      soundControls();
      play("turn");
    } else if (e.target.dataset.push) {
      import(e.target.dataset.push).then((m) => m.turn(e.target));
    } else if (e.target.matches("[data-volume]")) {
      keep.set("skymo-volume", e.target.value);
      play("flip");
    }
  });
  d.addEventListener("input", (e) => {
    if (e.target.dataset.graphemes) extras().then((m) => m.checkName(e.target));
  });

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
  soundControls();
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
