// The score sheet: rounds are sent through a queue kept in localStorage, so a round
// typed offline waits on this device and goes out when the connection is back. Each
// round carries its id: the server counts it once however often it arrives.
// Also the grid-count helper. Without JavaScript the plain forms do the same work.
(function () {
  "use strict";
  var sending = false;

  function sheet() { return document.getElementById("sheet"); }
  function key() { var s = sheet(); return s ? "skymo-sheet-" + s.dataset.code : null; }
  function load() {
    try { return JSON.parse(localStorage.getItem(key())) || []; } catch (e) { return []; }
  }
  function save(q) {
    if (q.length) localStorage.setItem(key(), JSON.stringify(q));
    else localStorage.removeItem(key());
  }
  function text(tpl, name) {
    var t = document.getElementById(tpl);
    var el = t && t.content.querySelector('[data-text="' + name + '"]');
    return el ? el.textContent : "";
  }
  function newId() {
    var a = new Uint8Array(16);
    crypto.getRandomValues(a);
    return Array.prototype.map.call(a, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function show(note) {
    var status = document.getElementById("sync-status");
    var pending = document.getElementById("pending");
    if (!status) return;
    var q = load();
    if (note) { status.hidden = false; status.textContent = note; }
    else if (!q.length) { status.hidden = true; status.textContent = ""; }
    else {
      status.hidden = false;
      status.textContent = q.length === 1 ? text("sync-texts", "offline-1")
        : text("sync-texts", "offline").replace("{n}", q.length);
    }
    if (pending) {
      pending.textContent = "";
      q.forEach(function (r) {
        var li = document.createElement("li");
        li.textContent = text("sync-texts", "waiting") + ": " + r.summary;
        pending.appendChild(li);
      });
    }
  }

  // Swap in the sheet the server sent, keeping a round being typed meanwhile.
  function swap(html, keepTyping) {
    var box = document.createElement("div");
    box.innerHTML = html;
    var fresh = box.querySelector("#sheet");
    var old = sheet();
    if (!fresh || !old) return false;
    var typed = keepTyping ? typedRound() : null;
    old.replaceWith(fresh);
    if (window.htmx) window.htmx.process(fresh);
    if (typed) restore(typed);
    addCounters();
    show();
    return true;
  }
  function typedRound() {
    var form = document.getElementById("round-form");
    if (!form) return null;
    var fields = Array.prototype.filter.call(form.elements, function (el) {
      return /^score-/.test(el.name) && el.value !== "";
    });
    if (!fields.length) return null;
    var data = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (/^score-/.test(el.name)) data[el.name] = el.value;
      if (el.name === "ender" && el.checked) data.ender = el.value;
    });
    return data;
  }
  function restore(data) {
    var form = document.getElementById("round-form");
    if (!form) return;
    Array.prototype.forEach.call(form.elements, function (el) {
      if (/^score-/.test(el.name) && data[el.name] !== undefined) el.value = data[el.name];
      if (el.name === "ender") el.checked = el.value === data.ender;
    });
  }

  function flush() {
    var q = key() ? load() : [];
    if (sending || !q.length) { show(); return; }
    sending = true;
    var r = q[0];
    fetch(r.action, {
      method: "POST",
      body: new URLSearchParams(r.fields),
      headers: { "HX-Request": "true", "X-CSRF-Token": r.fields.csrf_token },
      credentials: "same-origin"
    }).then(function (resp) {
      return resp.text().then(function (html) {
        sending = false;
        if (resp.status >= 500) { show(); return; } // kept: tried again later
        // Accepted, already accepted, or refused with the fields marked: it has left
        // the queue either way (a refused round is back in the form, nothing lost).
        var box = document.createElement("div");
        box.innerHTML = html;
        if (!box.querySelector("#sheet")) {
          // Not the sheet: most likely the form's token expired (a sign-in renews the
          // session). Take a fresh one from the page once, then try again.
          var error = box.querySelector(".error");
          if (!r.refreshed) {
            refreshToken().then(function (ok) { if (ok) flush(); else show(error ? error.textContent : ""); });
          } else {
            show(error ? error.textContent : "");
          }
          return;
        }
        save(load().filter(function (x) { return x.id !== r.id; }));
        swap(html, resp.ok);
        if (resp.ok) flush();
        else {
          // Refused (the game ended meanwhile, say): say which round and why.
          var why = sheet() && sheet().querySelector(".error");
          show(text("sync-texts", "refused").replace("{round}", r.summary) + (why ? " " + why.textContent : ""));
        }
      });
    }).catch(function () { sending = false; show(); });
  }

  function refreshToken() {
    return fetch(location.href, { credentials: "same-origin" }).then(function (resp) {
      return resp.text();
    }).then(function (html) {
      var found = /name="csrf_token" value="([^"]+)"/.exec(html);
      if (!found) return false;
      var q = load();
      q.forEach(function (x) { x.fields.csrf_token = found[1]; x.refreshed = true; });
      save(q);
      document.querySelectorAll("input[name=csrf_token]").forEach(function (el) { el.value = found[1]; });
      return true;
    }).catch(function () { return false; });
  }

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (form.id !== "round-form" || !key()) return;
    ev.preventDefault();
    var fields = {};
    var parts = [];
    new FormData(form).forEach(function (v, k) { fields[k] = v; });
    Array.prototype.forEach.call(form.querySelectorAll("input[name^=score-]"), function (el) {
      parts.push(el.dataset.name + " " + el.value);
    });
    var q = load();
    q.push({ id: fields.round_id, action: form.action, fields: fields, summary: parts.join(", ") });
    save(q);
    Array.prototype.forEach.call(form.elements, function (el) {
      if (/^score-/.test(el.name)) el.value = "";
      if (el.name === "ender") el.checked = false;
      if (el.name === "round_id") el.value = newId();
    });
    show();
    flush();
  }, true);

  // ----- the grid-count helper --------------------------------------------------------
  function addCounters() {
    if (!document.getElementById("grid-helper-tpl")) return;
    document.querySelectorAll(".round-form input[name^=score-]").forEach(function (input) {
      if (input.dataset.counter) return;
      input.dataset.counter = "1";
      var button = document.createElement("button");
      button.type = "button";
      button.className = "small count-button";
      button.textContent = text("grid-helper-tpl", "count-button");
      button.setAttribute("aria-label", button.textContent + ": " + input.dataset.name);
      button.setAttribute("aria-expanded", "false");
      button.addEventListener("click", function () { toggleCounter(input, button); });
      input.insertAdjacentElement("afterend", button);
    });
  }
  function toggleCounter(input, button) {
    var open = button.nextElementSibling;
    if (open && open.classList.contains("counter")) {
      open.remove();
      button.setAttribute("aria-expanded", "false");
      return;
    }
    var panel = document.getElementById("grid-helper-tpl").content.firstElementChild.cloneNode(true);
    var cards = [];
    var rows = 3;
    function total() { return cards.reduce(function (a, b) { return a + b.value; }, 0); }
    function count() { return cards.reduce(function (a, b) { return a + b.n; }, 0); }
    function render() {
      panel.querySelector(".counter-sum").textContent = text("grid-helper-tpl", "count")
        .replace("{cards}", count()).replace("{sum}", total());
    }
    panel.addEventListener("click", function (ev) {
      var b = ev.target.closest("button");
      if (!b) return;
      if (b.dataset.card !== undefined) cards.push({ value: parseInt(b.dataset.card, 10), n: 1 });
      else if (b.dataset.column) cards.push({ value: 0, n: rows });
      else if (b.dataset.act === "back") cards.pop();
      else if (b.dataset.act === "clear") cards = [];
      else if (b.dataset.act === "use") {
        input.value = total();
        panel.remove();
        button.setAttribute("aria-expanded", "false");
        input.focus();
        return;
      }
      render();
    });
    render();
    button.insertAdjacentElement("afterend", panel);
    button.setAttribute("aria-expanded", "true");
  }

  window.addEventListener("online", flush);
  setInterval(function () { if (key() && load().length) flush(); }, 4000);
  document.body.addEventListener("htmx:afterSettle", function () { addCounters(); show(); });
  addCounters();
  flush();
})();
