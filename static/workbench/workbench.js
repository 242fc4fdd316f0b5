// The workbench's own script, a static file so the Content-Security-Policy needs no
// 'unsafe-inline' (docs/deployment.md). Runs on load and after every htmx swap.
(function () {
  "use strict";

  // A key cut short by an ellipsis (workbench.css) keeps its whole text in a tooltip.
  function titleClipped(root) {
    root.querySelectorAll("code, .class-chip").forEach(function (el) {
      var text = el.textContent.trim();
      if (el.scrollWidth > el.clientWidth + 1 && !(el.title || "").includes(text)) {
        el.title = el.title ? text + " — " + el.title : text;
      }
    });
  }

  // Bars whose width is data (a run's progress, a token budget) carry it as data-percent:
  // a style attribute would be an inline style, which the policy blocks.
  function sizeBars(root) {
    root.querySelectorAll("[data-percent]").forEach(function (el) {
      var percent = Math.max(0, Math.min(100, parseFloat(el.dataset.percent) || 0));
      el.style.width = percent + "%";
    });
  }

  // A command meant to be copied ([data-copy], templates/workbench/_command.html) gets a
  // copy button; without JavaScript or a clipboard the whole command is still there to select.
  function copyButtons(root) {
    if (!navigator.clipboard) { return; }
    root.querySelectorAll("[data-copy]").forEach(function (box) {
      if (box.querySelector("button.copy")) { return; }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy";
      button.textContent = "Copy";
      button.addEventListener("click", function () {
        var text = box.querySelector("code").textContent;
        navigator.clipboard.writeText(text).then(function () {
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = "Copy"; }, 2000);
        }, function () {
          button.textContent = "Select and copy it";
        });
      });
      box.appendChild(button);
    });
  }

  function enhance(root) {
    sizeBars(root);
    titleClipped(root);
    copyButtons(root);
  }

  document.addEventListener("DOMContentLoaded", function () { enhance(document); });
  document.addEventListener("htmx:afterSettle", function (event) { enhance(event.target); });
})();
