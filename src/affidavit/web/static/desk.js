// The review desk's keyboard: j/k move, Enter opens, x ticks, a approves, r rejects, ? helps;
// y/n/d answer the texts that wait for a person, s approves what is supported, g approves a plan
// with the plans it needs. Everything it does, a mouse (or Tab) does too: it only clicks,
// focuses, ticks and submits the forms.
(function () {
  "use strict";
  var current = -1;

  function waits() { return Array.prototype.slice.call(document.querySelectorAll("li.wait")); }

  // Each operation with waiting texts is ticked only when every one of them got a "y", and
  // left out (a hidden "no" field) when any got an "n": nothing waiting is ticked unseen.
  function settle() {
    var byOp = {};
    waits().forEach(function (li) {
      var op = li.getAttribute("data-op");
      (byOp[op] = byOp[op] || []).push(li.getAttribute("data-answer"));
    });
    var holder = document.getElementById("said-no");
    if (holder) { holder.textContent = ""; }
    Object.keys(byOp).forEach(function (op) {
      var answers = byOp[op];
      var no = answers.indexOf("n") >= 0;
      var box = document.getElementById("tick-" + op);
      if (box) { box.checked = !no && answers.every(function (a) { return a === "y"; }); }
      if (no && holder) {
        var field = document.createElement("input");
        field.type = "hidden"; field.name = "no"; field.value = op;
        holder.appendChild(field);
      }
    });
    countTicks();
  }

  function countTicks() {
    var state = document.getElementById("ticked-state");
    if (!state) { return; }
    var boxes = document.querySelectorAll("input[type=checkbox][form=approve-form]");
    var ticked = Array.prototype.filter.call(boxes, function (b) { return b.checked; }).length;
    var open = waits().filter(function (li) { return !li.getAttribute("data-answer"); }).length;
    var no = document.querySelectorAll("#said-no input").length;
    state.textContent = ticked + " of " + boxes.length + " pending operation(s) ticked" +
      (no ? "; " + no + " left out (you said no)" : "") +
      (open ? "; " + open + " waiting text(s) not answered yet." : "; every waiting text answered.");
  }

  function answer(li, say) {
    var words = { y: "yes: it goes in", n: "no: its operation stays out", d: "later" };
    li.setAttribute("data-answer", say);
    li.classList.remove("said-y", "said-n", "said-d");
    li.classList.add("said-" + say);
    var out = li.querySelector(".answer");
    if (out) { out.textContent = words[say]; }
    settle();
  }

  function focusWait(li) {
    waits().forEach(function (el) { el.classList.toggle("current", el === li); });
    if (!li) { return; }
    li.setAttribute("tabindex", "-1");
    li.focus();
    li.scrollIntoView({ block: "nearest" });
  }

  function currentWait() {
    var all = waits();
    var focused = all.filter(function (li) { return li.classList.contains("current"); })[0];
    return focused || all.filter(function (li) { return !li.getAttribute("data-answer"); })[0];
  }

  function say(key) {
    var li = currentWait();
    if (!li) { return false; }
    answer(li, key);
    var all = waits();
    var next = all.slice(all.indexOf(li) + 1).filter(function (el) { return !el.getAttribute("data-answer"); })[0];
    focusWait(next || null);
    if (!next) {
      var button = document.getElementById("approve-selected");
      if (button) { button.focus(); }
    }
    return true;
  }

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
        if (box) { box.checked = !box.checked; countTicks(); }
        break;
      }
      case "a": {
        var form = document.getElementById("approve-form");
        if (form) { form.requestSubmit(document.getElementById("approve-selected")); }
        break;
      }
      case "y": case "n": case "d":
        if (!say(event.key)) { return; }
        break;
      case "s": {
        var supported = document.getElementById("approve-supported");
        if (!supported) { return; }
        if (supported.tagName === "A") { supported.click(); }
        else { document.getElementById("approve-form").requestSubmit(supported); }
        break;
      }
      case "g": {
        var together = document.getElementById("together-form");
        if (!together) { return; }
        together.requestSubmit();
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

  document.documentElement.setAttribute("data-keys", "ready");

  document.addEventListener("DOMContentLoaded", function () {
    waits().forEach(function (li) {
      li.querySelectorAll("button.say").forEach(function (button) {
        button.addEventListener("click", function () { answer(li, button.getAttribute("data-say")); });
      });
    });
    document.querySelectorAll("input[type=checkbox][form=approve-form]").forEach(function (box) {
      box.addEventListener("change", countTicks);
    });
    if (waits().length) { focusWait(currentWait()); }
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
