// The review desk's keyboard: j/k move, Enter opens, x ticks, a approves, r rejects, ? helps.
// Everything it does, a mouse (or Tab) does too: it only clicks, focuses and submits the forms.
(function () {
  "use strict";
  var current = -1;

  function items() { return Array.prototype.slice.call(document.querySelectorAll(".item")); }

  function select(index) {
    var all = items();
    if (!all.length) { return; }
    current = Math.max(0, Math.min(all.length - 1, index));
    all.forEach(function (el, i) { el.classList.toggle("current", i === current); });
    var el = all[current];
    el.setAttribute("tabindex", "-1");
    el.focus();
    el.scrollIntoView({ block: "nearest" });
  }

  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }

  function toggleHelp() {
    var help = document.getElementById("help");
    if (!help) { return; }
    help.hidden = !help.hidden;
    if (!help.hidden) { document.getElementById("help-close").focus(); }
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (event.key === "Escape") {
      var help = document.getElementById("help");
      if (help && !help.hidden) { help.hidden = true; }
      if (typing(event.target)) { event.target.blur(); }
      return;
    }
    if (typing(event.target)) { return; }
    var all = items();
    switch (event.key) {
      case "j": select(current + 1); break;
      case "k": select(current - 1); break;
      case "Enter": {
        if (current < 0 || !all[current] || event.target !== all[current]) { return; }
        var link = all[current].querySelector("a");
        if (link) { link.click(); }
        break;
      }
      case "x": {
        var item = all[current];
        var box = item && item.querySelector("input[type=checkbox]");
        if (box) { box.checked = !box.checked; }
        break;
      }
      case "a": {
        var form = document.getElementById("approve-form");
        if (form) { form.requestSubmit(document.getElementById("approve-selected")); }
        break;
      }
      case "r": {
        var reason = document.getElementById("reason");
        if (reason) { reason.focus(); }
        break;
      }
      case "?": toggleHelp(); break;
      default: return;
    }
    event.preventDefault();
  });

  document.addEventListener("DOMContentLoaded", function () {
    var close = document.getElementById("help-close");
    if (close) { close.addEventListener("click", toggleHelp); }
    var span = document.getElementById("span");
    if (span) { span.scrollIntoView({ block: "center" }); }
    function tick() {
      document.querySelectorAll(".countdown[data-expires]").forEach(function (el) {
        var left = Math.floor((Date.parse(el.getAttribute("data-expires")) - Date.now()) / 60000);
        if (isNaN(left)) { return; }
        el.textContent = left < 0 ? "expired" : (left >= 60 ? Math.floor(left / 60) + "h" + String(left % 60).padStart(2, "0") + "m" : left + "m");
      });
    }
    tick();
    setInterval(tick, 30000);
    // jobs: follow each running job's event stream (the API's SSE, through the desk's session)
    document.querySelectorAll("tr.job[data-events]").forEach(function (row) {
      var url = row.getAttribute("data-events");
      if (!url) { return; }
      var source = new EventSource(url);
      var status = row.querySelector(".job-status");
      var progress = row.querySelector(".job-progress");
      var kinds = ["submitted", "started", "progress", "cancel_requested", "requeued", "done", "failed", "cancelled"];
      kinds.forEach(function (kind) {
        source.addEventListener(kind, function (message) {
          var event = JSON.parse(message.data);
          var data = event.data || {};
          if (kind !== "progress") { status.textContent = kind; }
          if (data.total !== undefined || data.done !== undefined) {
            progress.textContent = (data.done || 0) + "/" + (data.total || 0) + " " + (data.message || "");
          } else if (data.error) {
            progress.textContent = data.error;
          }
          if (kind === "done" || kind === "failed" || kind === "cancelled") { source.close(); }
        });
      });
    });
  });
}());
