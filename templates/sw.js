// Skymo's service worker (app/web/pwa.py): static files from the cache, pages from the
// network, and the offline page when the network is gone.
// The offline page in the language of the page that registered this worker (a new
// language is a new worker: its bytes differ, and it caches that language's page).
const CACHE = "skymo-{{ version }}-{{ lang }}";
const OFFLINE = "{{ url_for('pwa.offline', lang=lang) }}";
const FILES = {{ (files + [url_for('pwa.offline', lang=lang)])|tojson }};
const ICON = {{ icon|tojson }};

// Fetched without cookies: a response here must never replace the session cookie of a
// request the page makes at the same time (creating a table, joining).
self.addEventListener("install", (e) => {
  const requests = FILES.map((url) => new Request(url, { credentials: "omit" }));
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(requests)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (e) => {
  e.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

// A turn alert (app/features/alerts.py): shown as sent, one per table (its tag); tapping
// it opens the table, in a window already showing it if there is one.
self.addEventListener("push", (e) => {
  const alert = e.data ? e.data.json() : null;
  if (!alert) return;
  e.waitUntil(self.registration.showNotification(alert.title, {
    body: alert.body, tag: alert.tag, renotify: true, icon: ICON, data: { url: alert.url },
  }));
});

self.addEventListener("notificationclick", (e) => {
  e.notification.close();
  const url = new URL(e.notification.data?.url || "/", location.origin).href;
  e.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((open) => {
    const same = open.find((c) => c.url.split("?")[0] === url && "focus" in c);
    return same ? same.focus() : self.clients.openWindow(url);
  }));
});

self.addEventListener("fetch", (e) => {
  const request = e.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== location.origin) return;
  if (request.mode === "navigate") {
    e.respondWith(fetch(request).catch(() => caches.match(OFFLINE)));
  } else if (url.pathname.startsWith("/static/")) {
    e.respondWith(caches.match(request).then((hit) => hit || fetch(request)));
  }
});
