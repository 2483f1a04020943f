// gocurator ui: follows the view's server-sent events and swaps the
// fragment in; ticks the ages between updates; asks for confirmation
// before an action. No build step, no dependency.
(function () {
  "use strict";
  var view = document.getElementById("view");
  var offline = document.getElementById("offline");
  var src = document.body.dataset.events;
  var received = Date.now();

  function formatAge(sec) {
    if (sec < 1) return Math.floor(sec * 1000) + "ms";
    if (sec < 60) return Math.floor(sec) + "s";
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    if (sec < 3600) return Math.floor(sec / 60) + "m" + pad(Math.floor(sec % 60)) + "s";
    if (sec < 86400) return Math.floor(sec / 3600) + "h" + pad(Math.floor(sec % 3600 / 60)) + "m";
    return Math.floor(sec / 86400) + "d" + pad(Math.floor(sec % 86400 / 3600)) + "h";
  }

  function tick() {
    var elapsed = (Date.now() - received) / 1000;
    var ages = document.querySelectorAll("[data-age]");
    for (var i = 0; i < ages.length; i++) {
      ages[i].textContent = formatAge(parseFloat(ages[i].dataset.age) + elapsed);
    }
  }
  setInterval(tick, 1000);

  function setOffline(on) {
    if (offline) offline.hidden = !on;
    document.body.classList.toggle("offline", on);
  }

  function connect() {
    if (!src || !window.EventSource) return;
    var es = new EventSource(src);
    es.addEventListener("view", function (e) {
      view.innerHTML = e.data;
      received = Date.now();
      document.body.dataset.version = e.lastEventId;
      setOffline(false);
    });
    es.onopen = function () { setOffline(false); };
    es.onerror = function () {
      setOffline(true);
      // A refused stream (the server came back different) is not
      // retried by the browser: start a new one.
      if (es.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
    };
  }
  connect();

  document.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-action]");
    if (!b) return;
    var action = b.dataset.action, node = b.dataset.node;
    var what = action === "break"
      ? "Delete " + node + "? A holder still running keeps running as if it held the lock."
      : "Ask the holder of " + node + " to release? Only a revocable holder does.";
    if (!window.confirm(what)) return;
    var body = "node=" + encodeURIComponent(node) + "&confirm=" + encodeURIComponent(node);
    fetch("/api/actions/" + action, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: body
    }).then(function (r) { return r.json(); }).then(function (doc) {
      if (doc.error) window.alert(doc.error);
    });
  });
})();
