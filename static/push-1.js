// Turn alerts on this device (Web Push): static/skymo-1.js loads this module the first
// time the player uses the "Tell me when it's my turn" switch (the table page has a
// weight budget). The browser's push subscription is shared by every table; the server
// keeps it for this table's seat, and turning the switch off tells the server only.
const table = location.pathname.replace(/\/$/, "");

function send(path, body) {
  // htmx's headers of the page (its CSRF token), as its own requests carry them.
  const headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
  headers["Content-Type"] = "application/json";
  return fetch(table + path, { method: "POST", headers, body: JSON.stringify(body) })
    .then((r) => (r.ok ? r.json() : Promise.reject(new Error(r.status))));
}

function bytes(base64url) {
  const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

// What happened, said next to the switch (the server's words, in the page's language).
function say(box, text) {
  let note = box.parentNode.nextElementSibling;
  if (!note || !note.matches("[data-push-note]")) {
    note = document.createElement("p");
    note.setAttribute("role", "status");
    note.dataset.pushNote = "";
    note.style.cssText = "margin:0;max-width:16rem;font-size:.9rem";
    box.parentNode.after(note);
  }
  note.textContent = text || "";
}

async function subscription(key) {
  const worker = await navigator.serviceWorker.ready;
  const found = await worker.pushManager.getSubscription();
  if (found) return found;
  return worker.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: bytes(key) });
}

// Turns alerts on or off as the switch `box` says, and keeps whether they are on in a
// cookie of this table's pages: the server shows the switch as it was left.
export async function turn(box) {
  // The key and the words; without them (no connection) the switch just goes back.
  const texts = await fetch(table + "/alerts").then((r) => r.json()).catch(() => ({}));
  try {
    if (box.checked) {
      if ((await Notification.requestPermission()) !== "granted") throw new Error("denied");
      await send("/alerts", (await subscription(texts.key)).toJSON());
    } else {
      const worker = await navigator.serviceWorker.ready;
      const found = await worker.pushManager.getSubscription();
      if (found) await send("/alerts/off", { endpoint: found.endpoint });
    }
    say(box, box.checked ? texts.on : texts.off);
  } catch (e) {
    box.checked = false;
    say(box, texts.failed);
  }
  const age = box.checked ? 400 * 24 * 3600 : 0;
  document.cookie = `skymo-alerts=1; path=${table}; max-age=${age}; samesite=lax`;
}
