/* clearing-sim: one transaction's story on a time axis (the renderer of issue 28).
 *
 * One renderer, two hosts: the console (/sim/console, console.js) and the HTML reports of
 * `clearing-sim run --html` / `timeline --html` (report.js), which inline this same file.
 * It draws a story as GET /sim/v1/transactions/{id}/story answers it (clearing_sim/story.py)
 * into a container, with DOM nodes and textContent only: nothing from the story is ever
 * parsed as HTML. Every instant is shown as its virtual ISO time and its offset from the
 * transaction's start; every colour has a text label beside it.
 *
 * window.ClearingStory = {render(container, story, options), el(tag, attrs, children)}
 * options.marks: [{atMs, label, passed, text}] drawn on a "verdicts" lane (reports).
 */
(function () {
  "use strict";

  var LANES = ["state", "saga", "issuer", "ledger", "rtgs", "webhook", "subscription", "fault"];

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      var value = attrs[name];
      if (value === null || value === undefined || value === false) { return; }
      if (name === "text") { node.textContent = String(value); }
      else if (name === "className") { node.className = value; }
      else if (name.slice(0, 2) === "on") { node.addEventListener(name.slice(2), value); }
      else { node.setAttribute(name, value === true ? "" : String(value)); }
    });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) { return; }
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function instant(at) {
    // "+0:00:43.461 (2026-01-01T00:00:43.461Z)": offset first, the ISO instant beside it
    if (!at) { return "—"; }
    return at.offset + " (" + at.at + ")";
  }

  function badge(kind, label) {
    return el("span", {className: "badge badge-" + kind, text: label});
  }

  function yesNo(value) { return value ? "yes" : "no"; }

  function summary(story) {
    var tx = story.transaction;
    if (!tx) {
      return el("p", {text: "Transaction " + story.transactionId +
                            " is no longer in the book; its records follow."});
    }
    var status = tx.lifecycleStatus + (tx.parked ? " (parked)" : "") +
                 (tx.terminal ? ", terminal" : "");
    var rows = [
      ["Transaction", tx.id],
      ["Payment reference", tx.paymentReference],
      ["Use case", tx.useCase],
      ["Status", status],
      ["Parked", yesNo(tx.parked)],
      ["Terminal", yesNo(tx.terminal)],
      ["Saga step", tx.details.sagaStep.current + " of " + tx.details.sagaStep.total + ": " +
                    tx.details.sagaStep.name],
      ["Legs", (tx.legs || []).map(function (leg) {
        return leg.leg + " via issuer " + leg.issuerId + " (" + leg.settlementMode + ")";
      }).join("; ") || "none"],
      ["Started", instant(story.start)],
      ["Now", instant(story.now)]
    ];
    var list = el("dl", {className: "facts"});
    rows.forEach(function (row) {
      list.appendChild(el("dt", {text: row[0]}));
      list.appendChild(el("dd", {text: row[1]}));
    });
    var parts = [el("h3", {text: "Summary"}), list];
    if (tx.parkedBecause) {
      var why = tx.parkedBecause;
      parts.push(el("p", {className: "parked-why", role: "note"}, [
        badge("parked", "PARKED"), " Parked because: " + (why.reasonCode || "no reason code") +
        (why.text ? " — " + why.text : "") + (why.at ? " at " + why.offset + " (" + why.at + ")" : "")
      ]));
    }
    return el("section", {className: "story-summary"}, parts);
  }

  function offsetText(ms) {
    // "+H:MM:SS.mmm", as the story's offsets are written (clearing_sim/timeline.py)
    var sign = ms < 0 ? "-" : "+";
    ms = Math.abs(ms);
    var hours = Math.floor(ms / 3600000);
    var minutes = Math.floor((ms % 3600000) / 60000);
    var seconds = (ms % 60000) / 1000;
    return sign + hours + ":" + (minutes < 10 ? "0" : "") + minutes + ":" +
           (seconds < 10 ? "0" : "") + seconds.toFixed(3);
  }

  function subscriptionMoments(story) {
    // the subscriptions' health instants, as entries of a "subscription" lane
    var moments = [];
    story.subscriptions.forEach(function (s) {
      [["failingSince", "failing since (the 72 h streak starts)"],
       ["disableAt", "can be disabled from (streak start + 72 h)"],
       ["disabledAt", "DISABLED"], ["lastSuccess", "last success"]].forEach(function (pair) {
        var at = s[pair[0]];
        if (at) {
          moments.push({seq: "sub-" + s.id + "-" + pair[0], at: at.at, atMs: at.atMs,
                        offsetMs: at.offsetMs, offset: at.offset, lane: "subscription",
                        kind: "subscription." + pair[0],
                        text: "subscription " + s.id + " " + pair[1]});
        }
      });
    });
    return moments;
  }

  function position(offsetMs, spanMs) {
    // a log scale: milliseconds at the start and days at the end both stay readable
    if (spanMs <= 0 || offsetMs <= 0) { return 0; }
    return 100 * Math.log(1 + offsetMs) / Math.log(1 + spanMs);
  }

  function axis(story, marks) {
    var entries = story.entries.concat(subscriptionMoments(story));
    var spanMs = Math.max(story.now.offsetMs, 1);
    entries.forEach(function (e) { spanMs = Math.max(spanMs, e.offsetMs); });
    (marks || []).forEach(function (m) { spanMs = Math.max(spanMs, m.atMs - story.start.atMs); });
    var lanes = LANES.filter(function (lane) {
      return entries.some(function (e) { return e.lane === lane; });
    });
    entries.forEach(function (e) {
      if (lanes.indexOf(e.lane) < 0) { lanes.push(e.lane); }
    });
    var rows = lanes.map(function (lane) {
      var track = el("div", {className: "track"});
      entries.filter(function (e) { return e.lane === lane; }).forEach(function (e) {
        var mark = el("a", {className: "mark lane-" + lane + " kind-" + e.kind.replace(".", "-"),
                            href: "#entry-" + e.seq,
                            title: e.offset + " " + e.at + " " + e.text,
                            "aria-label": lane + " at " + e.offset + ": " + e.text});
        mark.style.left = position(e.offsetMs, spanMs).toFixed(3) + "%";
        track.appendChild(mark);
      });
      return el("div", {className: "lane"}, [el("span", {className: "lane-name", text: lane}),
                                             track]);
    });
    if (marks && marks.length) {
      var track = el("div", {className: "track"});
      marks.forEach(function (m) {
        var offset = m.atMs - story.start.atMs;
        var mark = el("span", {className: "mark verdict " + (m.passed ? "pass" : "fail"),
                               title: (m.passed ? "PASS " : "FAIL ") + m.label,
                               text: m.passed ? "✓" : "✗"});
        mark.style.left = position(offset, spanMs).toFixed(3) + "%";
        track.appendChild(mark);
      });
      rows.push(el("div", {className: "lane"}, [el("span", {className: "lane-name",
                                                             text: "verdicts"}), track]));
    }
    var now = el("span", {className: "now-line", title: "now " + story.now.at});
    now.style.left = position(story.now.offsetMs, spanMs).toFixed(3) + "%";
    return el("section", {className: "axis", "aria-label": "time axis"}, [
      el("h3", {text: "Time axis"}),
      el("p", {className: "hint", text: "Log scale from the start (+0:00:00.000) to " +
               offsetText(spanMs) + "; each mark links to its line below. " +
               "The thin line is now (" + story.now.offset + ")."}),
      el("div", {className: "lanes"}, rows.concat([el("div", {className: "lane now-row"}, [
        el("span", {className: "lane-name", text: "now"}),
        el("div", {className: "track"}, [now])])]))
    ]);
  }

  function table(headers, rows, caption) {
    return el("div", {className: "scroll"}, [el("table", {}, [
      caption ? el("caption", {text: caption}) : null,
      el("thead", {}, [el("tr", {}, headers.map(function (h) {
        return el("th", {scope: "col", text: h});
      }))]),
      el("tbody", {}, rows)
    ])]);
  }

  function entriesTable(story, marks) {
    var all = story.entries.concat(subscriptionMoments(story));
    all.sort(function (a, b) { return a.atMs - b.atMs; });
    var rows = all.map(function (e) {
      return el("tr", {id: "entry-" + e.seq, className: "lane-row-" + e.lane}, [
        el("td", {className: "num", text: e.offset}),
        el("td", {text: e.at}),
        el("td", {}, [badge("lane-" + e.lane, e.lane)]),
        el("td", {text: e.text})
      ]);
    });
    (marks || []).forEach(function (m) {
      rows.push(el("tr", {className: "verdict-row"}, [
        el("td", {className: "num", text: m.offset || ""}),
        el("td", {text: m.at || ""}),
        el("td", {}, [badge(m.passed ? "pass" : "fail", m.passed ? "PASS" : "FAIL")]),
        el("td", {text: m.label + (m.text ? ": " + m.text : "")})
      ]));
    });
    return el("section", {}, [el("h3", {text: "Everything that happened"}),
      table(["Offset", "Virtual time", "Lane", "What"], rows)]);
  }

  function instructions(story) {
    if (!story.instructions.length) { return null; }
    return el("section", {}, [el("h3", {text: "Issuer instructions"})].concat(
      story.instructions.map(function (ins) {
        return table(["Status", "Offset", "Virtual time"], ins.statuses.map(function (s) {
          return el("tr", {}, [el("td", {text: s.status}), el("td", {text: s.offset}),
                               el("td", {text: s.at})]);
        }), ins.leg + " instruction " + ins.instructionId + " at issuer " + ins.issuerId);
      })));
  }

  function attemptRow(a) {
    var signature = a.request.headers["Service-Signature"] || "(none)";
    return el("tr", {}, [
      el("td", {className: "num", text: String(a.attempt)}),
      el("td", {text: a.offset}),
      el("td", {text: a.at}),
      el("td", {text: a.response ? String(a.response.status) : "no answer (" + a.fault + ")"}),
      el("td", {}, [badge(a.outcome, a.outcome)]),
      el("td", {}, [el("code", {text: signature})]),
      el("td", {}, [el("details", {}, [el("summary", {text: "body"}),
                                       el("pre", {text: a.request.body})])]),
      el("td", {text: a.nextAttemptAt || "—"})
    ]);
  }

  function delivery(d) {
    var parts = [el("summary", {}, [badge(d.outcome, d.outcome.toUpperCase()), " " +
      d.eventType + " to " + d.subscriptionId + " — " + d.attempts.length + " attempt(s), " +
      "event at " + d.offset + " (" + d.at + ")"])];
    parts.push(table(["#", "Offset", "Sent at", "Answer", "Outcome", "Service-Signature",
                      "Body", "Next attempt"], d.attempts.map(attemptRow), "Attempts"));
    if (d.retriesToCome.length) {
      parts.push(el("h4", {text: "Retries to come"}));
      parts.push(el("ul", {}, d.retriesToCome.map(function (r) {
        return el("li", {text: "attempt " + r.attempt + " at " + r.offset + " (" + r.at + ")" +
          (r.onTheWire ? " — on the wire" : " — scheduled") +
          (r.afterDisableAt ? " — at or after the disable instant: dropped if it still fails"
                            : "")});
      })));
    }
    if (d.ending) {
      parts.push(el("p", {text: "Ended: " + d.ending.kind + " at " + d.ending.offset + " (" +
                              d.ending.at + ")"}));
    }
    return el("details", {className: "delivery outcome-" + d.outcome,
                          "data-event-type": d.eventType}, parts);
  }

  function deliveries(story) {
    var health = story.subscriptions.map(function (s) {
      return el("tr", {}, [
        el("td", {text: s.id}), el("td", {text: s.url}),
        el("td", {}, [badge(s.status, s.status + (s.deleted ? ", deleted" : ""))]),
        el("td", {text: instant(s.lastSuccess)}), el("td", {text: instant(s.failingSince)}),
        el("td", {text: instant(s.disableAt)}), el("td", {text: instant(s.disabledAt)}),
        el("td", {className: "num", text: String(s.pendingDeliveries)})
      ]);
    });
    return el("section", {}, [
      el("h3", {text: "Webhook deliveries (" + story.deliveries.length + ")"}),
      story.deliveries.length ? el("div", {}, story.deliveries.map(delivery))
                              : el("p", {text: "No webhook event for this transaction."}),
      health.length ? table(["Subscription", "URL", "Status", "Last success", "Failing since",
                             "Disable at", "Disabled at", "Pending"], health,
                            "Subscription health") : null
    ]);
  }

  function render(container, story, options) {
    var marks = (options && options.marks) || [];
    container.textContent = "";
    [summary(story), axis(story, marks), instructions(story), deliveries(story),
     entriesTable(story, marks)].forEach(function (part) {
      if (part) { container.appendChild(part); }
    });
  }

  window.ClearingStory = {render: render, el: el, badge: badge, instant: instant,
                          offsetText: offsetText};
}());
