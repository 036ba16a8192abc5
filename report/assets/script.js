// The page works without this script; it only adds the "Expand all" and
// "Collapse all" buttons and opens every section for printing.
(function () {
  "use strict";
  var sections = function () {
    return Array.prototype.slice.call(document.querySelectorAll(".card details"));
  };
  document.addEventListener("click", function (ev) {
    var action = ev.target && ev.target.getAttribute && ev.target.getAttribute("data-action");
    if (action !== "expand" && action !== "collapse") {
      return;
    }
    sections().forEach(function (d) { d.open = action === "expand"; });
  });
  // Printing shows every section; the ones that were closed close again
  // afterwards.
  var closed = [];
  window.addEventListener("beforeprint", function () {
    closed = sections().filter(function (d) { return !d.open; });
    closed.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () {
    closed.forEach(function (d) { d.open = false; });
    closed = [];
  });
})();
