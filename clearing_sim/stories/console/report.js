/* clearing-sim HTML report: the host of story.js in a self-contained page (issue 28 §3).
 *
 * The page carries its data in <script type="application/json" id="report-data">
 * (clearing_sim/html_report.py): the scenario's verdicts, each with the virtual instant it
 * was judged at, and the stories of its transactions. Each story is drawn by the same
 * renderer the console uses, with every verdict marked on its time axis.
 */
(function () {
  "use strict";

  var S = window.ClearingStory;
  var el = S.el;
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var root = document.getElementById("report");

  function verdicts() {
    var rows = data.verdicts.map(function (v) {
      return el("tr", {className: v.passed ? "verdict-pass" : "verdict-fail"}, [
        el("td", {}, [S.badge(v.passed ? "pass" : "fail", v.passed ? "PASS" : "FAIL")]),
        el("td", {text: v.label}), el("td", {text: v.expected}), el("td", {text: v.actual}),
        el("td", {text: v.at || "—"}), el("td", {className: "num", text: v.where})]);
    });
    return el("section", {}, [el("h2", {text: "Expectations (" + data.verdicts.length + ")"}),
      el("div", {className: "scroll"}, [el("table", {}, [
        el("thead", {}, [el("tr", {}, ["Verdict", "Expectation", "Expected", "Got",
                                       "Judged at (virtual)", "File:line"].map(function (h) {
          return el("th", {scope: "col", text: h});
        }))]),
        el("tbody", {}, rows)])])]);
  }

  function stories() {
    return data.stories.map(function (story) {
      var name = data.names[story.transactionId];
      var holder = el("div", {className: "story"});
      var marks = data.verdicts.filter(function (v) { return v.atMs !== null; })
        .map(function (v) {
          var offsetMs = v.atMs - story.start.atMs;
          return {atMs: v.atMs, passed: v.passed, label: v.label, at: v.at,
                  offset: S.offsetText(offsetMs),
                  text: v.passed ? "held" : "expected " + v.expected + ", got " + v.actual};
        });
      S.render(holder, story, {marks: marks});
      return el("section", {className: "story-section",
                            "data-transaction-id": story.transactionId}, [
        el("h2", {text: "Story of " + (name ? name + " (" + story.transactionId + ")"
                                            : story.transactionId)}), holder]);
    });
  }

  root.appendChild(verdicts());
  if (!data.stories.length) {
    root.appendChild(el("p", {text: "This scenario made no transaction."}));
  }
  stories().forEach(function (section) { root.appendChild(section); });
}());
