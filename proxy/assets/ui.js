// The live view reloads its content every few seconds while the page is
// open and shown: it fetches the page again and swaps in the new <main>,
// keeping the summary sections the reader opened or closed as they were.
// Without the script the page is a snapshot: reload it to update.
(function () {
  "use strict";
  var every = Number(document.body.getAttribute("data-refresh")) || 2000;
  var state = document.getElementById("live-state");
  var text = document.getElementById("live-text");
  if (!state || !document.getElementById("live")) {
    return;
  }
  // A section is known by its card and its title.
  var key = function (d) {
    var card = d.closest("article");
    var s = d.querySelector("summary");
    return (card ? card.id : "") + "|" + (s ? s.textContent : "");
  };
  var toggled = {};
  document.addEventListener("toggle", function (ev) {
    if (ev.target && ev.target.tagName === "DETAILS") {
      toggled[key(ev.target)] = ev.target.open;
    }
  }, true);
  var show = function (ok, what) {
    state.className = "live-state " + (ok ? "on" : "off");
    text.textContent = what;
  };
  var pad = function (n) { return (n < 10 ? "0" : "") + n; };
  var clock = function (d) { return pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds()); };
  var busy = false;
  var tick = function () {
    if (busy || document.hidden) {
      return;
    }
    busy = true;
    fetch(location.href, { credentials: "same-origin", cache: "no-store", headers: { "Accept": "text/html" } })
      .then(function (r) {
        if (!r.ok) {
          throw new Error("the proxy answered " + r.status);
        }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var next = doc.getElementById("live");
        var cur = document.getElementById("live");
        if (!next || !cur) {
          throw new Error("the page has changed shape: reload it");
        }
        next.querySelectorAll("details").forEach(function (d) {
          var k = key(d);
          if (Object.prototype.hasOwnProperty.call(toggled, k)) {
            d.open = toggled[k];
          }
        });
        cur.replaceWith(next);
        show(true, "live · updated " + clock(new Date()));
      })
      .catch(function (err) {
        show(false, "not updating (" + err.message + "); trying again");
      })
      .finally(function () { busy = false; });
  };
  show(true, "live · every " + Math.round(every / 1000) + " s");
  setInterval(tick, every);
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) {
      tick();
    }
  });
})();
