/* clearing-sim console: the served world, kept current by polling (issue 28).
 *
 * The operator token lives in one variable of this closure: never in the URL, a cookie,
 * localStorage or sessionStorage. Every request is fetch() with an Authorization header
 * (server-sent events could not carry it), to the same origin, without credentials.
 * Reads go only through the quiet operator routes (GET /sim/v1/overview, /transactions,
 * /transactions/{id}/story, /tail): they change nothing. The buttons call the operator
 * routes a curl user would call (POST /sim/v1/clock/advance, /checkpoints, /rewind), which
 * are journaled like any other.
 */
(function () {
  "use strict";

  var POLL_MS = 1000;
  var el = window.ClearingStory.el;
  var token = null;           // the operator token: memory only
  var chosen = null;          // the transaction whose story is shown
  var polling = null;
  var busy = false;
  var shown = {};             // what each panel last drew (JSON), so unchanged panels keep focus

  function $(id) { return document.getElementById(id); }

  function say(text, isError) {
    var status = $("status");
    status.textContent = text;
    status.className = isError ? "error" : "";
  }

  function call(method, path, body) {
    var init = {method: method, cache: "no-store", credentials: "omit", redirect: "error",
                referrerPolicy: "no-referrer",
                headers: {"Authorization": "Bearer " + token, "Accept": "application/json"}};
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then(function (response) {
      return response.json().then(function (envelope) {
        if (response.status === 401) {
          signOut("The operator token was refused: " + envelope.errors[0].message);
          throw new Error("unauthenticated");
        }
        if (!response.ok) {
          var error = (envelope.errors || [{}])[0];
          var refusal = new Error(response.status + " " + (error.code || "") + ": " +
                                  (error.message || "refused"));
          refusal.refusal = true;  // the server's answer, not a fault of this page
          throw refusal;
        }
        return envelope;
      });
    });
  }

  function changed(name, value) {
    var text = JSON.stringify(value);
    if (shown[name] === text) { return false; }
    shown[name] = text;
    return true;
  }

  function cells(tbody, rows) {
    tbody.textContent = "";
    rows.forEach(function (row) { tbody.appendChild(row); });
  }

  // the overview: clock, digest, journal, participants -----------------------------------
  function drawOverview(o) {
    if (!changed("overview", o)) { return; }
    var clock = $("clock");
    clock.textContent = "";
    [["Virtual now", o.clock.now], ["Since the epoch", o.clock.nowMs + " ms"],
     ["Mode", o.clock.mode + (o.clock.speed ? " ×" + o.clock.speed : "")],
     ["Epoch", o.clock.epoch], ["Seed", String(o.seed)],
     ["Advancing to", o.clock.advancingTo || "—"]].forEach(function (pair) {
      clock.appendChild(el("dt", {text: pair[0]}));
      clock.appendChild(el("dd", {text: pair[1]}));
    });
    $("digest").textContent = o.digest + " (" + o.records + " records)";
    $("journal-state").textContent = o.journal
      ? "A journal is on: checkpoints name a point; rewind rebuilds the world there."
      : "No journal: start clearing-sim serve with --journal FILE for checkpoints and rewind.";
    $("checkpoint-form").hidden = !o.journal;
    cells($("checkpoints"), o.checkpoints.map(function (c) {
      return el("li", {}, [c.name + " at " + c.at + " (digest " + c.digest.slice(0, 12) + "…) ",
        el("button", {type: "button", "data-checkpoint": c.name,
                      text: "Rewind to " + c.name, onclick: function () { rewind(c.name); }})]);
    }));
    cells($("participants").tBodies[0], o.participants.map(function (p) {
      var wallets = Object.keys(p.wallets).map(function (code) {
        return code + " " + p.wallets[code];
      }).join(", ") || "—";
      return el("tr", {}, [el("td", {text: p.participantName}),
        el("td", {text: p.participantKind}), el("td", {text: wallets}),
        el("td", {className: "num", text: p.rtgsBalanceGbp}),
        el("td", {className: "num", text: p.rtgsEarmarkedGbp}),
        el("td", {}, [el("code", {text: p.participantId})])]);
    }));
    var select = $("f-participant");
    var keep = select.value;
    select.textContent = "";
    select.appendChild(el("option", {value: "", text: "any"}));
    o.participants.forEach(function (p) {
      select.appendChild(el("option", {value: p.participantId, text: p.participantName}));
    });
    select.value = keep;
  }

  // transactions ---------------------------------------------------------------------------
  function query() {
    var pairs = [["lifecycleStatus", $("f-status").value], ["parked", $("f-parked").value],
                 ["terminal", $("f-terminal").value], ["useCase", $("f-usecase").value],
                 ["participantId", $("f-participant").value]];
    return pairs.filter(function (p) { return p[1]; }).map(function (p) {
      return encodeURIComponent(p[0]) + "=" + encodeURIComponent(p[1]);
    }).concat(["limit=1000"]).join("&");
  }

  function drawTransactions(envelope) {
    if (!changed("transactions", [envelope.data, chosen])) { return; }
    var rows = envelope.data;
    cells($("transactions").tBodies[0], rows.map(function (t) {
      var legs = t.legs.map(function (l) { return l.leg + " " + l.settlementMode; }).join("; ");
      var status = t.lifecycleStatus + (t.reasonCode ? " (" + t.reasonCode + ")" : "");
      return el("tr", {"data-transaction-id": t.id,
                       className: t.id === chosen ? "chosen" : ""}, [
        el("td", {text: t.paymentReference}), el("td", {text: t.useCase}),
        el("td", {text: status}),
        el("td", {}, [window.ClearingStory.badge(t.parked ? "parked" : "plain",
                                                 t.parked ? "PARKED" : "no")]),
        el("td", {text: t.terminal ? "yes" : "no"}), el("td", {text: legs}),
        el("td", {text: t.initiatedAt}),
        el("td", {}, [el("button", {type: "button", className: "show-story",
          "aria-pressed": t.id === chosen ? "true" : "false",
          "aria-label": "Show the story of " + t.paymentReference + " (" + t.id + ")",
          text: t.id === chosen ? "Shown" : "Show story",
          onclick: function () { choose(t.id); }})])]);
    }));
    $("transactions-more").textContent = rows.length + " transaction(s)" +
      (envelope.meta.nextCursor ? "; more than shown" : "");
    var select = $("terminal-tx");
    var keep = select.value;
    select.textContent = "";
    select.appendChild(el("option", {value: "", text: "(choose a transaction)"}));
    rows.filter(function (t) { return !t.terminal; }).forEach(function (t) {
      select.appendChild(el("option", {value: t.id, text: t.paymentReference + " " + t.id}));
    });
    select.value = keep && select.querySelector("option[value='" + keep + "']") ? keep : "";
  }

  function choose(id) {
    chosen = id;
    shown.story = null;
    poll();
  }

  // the log tail ---------------------------------------------------------------------------
  function tailPath() {
    var parts = ["limit=50"];
    var kind = $("log-kind").value.trim();
    if (kind) { parts.push("kind=" + encodeURIComponent(kind)); }
    if ($("log-mine").checked && chosen) {
      parts.push("transactionId=" + encodeURIComponent(chosen));
    }
    return "/sim/v1/tail?" + parts.join("&");
  }

  function drawTail(records) {
    if (!changed("tail", records)) { return; }
    cells($("log").tBodies[0], records.slice().reverse().map(function (r) {
      return el("tr", {}, [el("td", {className: "num", text: String(r.seq)}),
        el("td", {text: r.at}), el("td", {text: r.kind}),
        el("td", {}, [el("code", {text: JSON.stringify(r.fields)})])]);
    }));
  }

  // polling --------------------------------------------------------------------------------
  function poll() {
    if (token === null || busy) { return Promise.resolve(); }
    busy = true;
    var reads = [call("GET", "/sim/v1/overview"), call("GET", "/sim/v1/transactions?" + query()),
                 call("GET", tailPath())];
    if (chosen) {
      reads.push(call("GET", "/sim/v1/transactions/" + encodeURIComponent(chosen) + "/story"));
    }
    return Promise.all(reads).then(function (answers) {
      drawOverview(answers[0].data);
      drawTransactions(answers[1]);
      drawTail(answers[2].data);
      if (answers[3] && changed("story", answers[3].data)) {
        window.ClearingStory.render($("story"), answers[3].data);
      }
    }).catch(function (error) {
      if (error.message === "unauthenticated") { return; }
      say(error.message, true);
      if (!error.refusal) { console.error("clearing-sim console:", error); }  // a page fault
    }).then(function () { busy = false; });
  }

  // controls ---------------------------------------------------------------------------------
  function act(label, method, path, body) {
    say(label + "…");
    return call(method, path, body).then(function (envelope) {
      var d = envelope.data;
      say(label + ": done" + (d.stoppedAt ? ", stopped at " + d.stoppedAt + " (" + d.reason +
                                            (d.met ? ", met" : ", not met") + ")" : "") +
          (d.name ? " (" + d.name + ")" : ""));
      return poll();
    }).catch(function (error) {
      if (error.message !== "unauthenticated") { say(label + " refused: " + error.message, true); }
    });
  }

  function advance(body, label) {
    return act(label, "POST", "/sim/v1/clock/advance", body);
  }

  function rewind(name) {
    return act("Rewind to " + name, "POST", "/sim/v1/rewind", {checkpoint: name});
  }

  function signOut(message) {
    token = null;
    chosen = null;
    shown = {};
    if (polling !== null) { clearInterval(polling); polling = null; }
    $("app").hidden = true;
    $("login").hidden = false;
    say(message, true);
    $("token").focus();
  }

  function wire() {
    $("token-form").addEventListener("submit", function (event) {
      event.preventDefault();
      token = $("token").value;
      $("token").value = "";
      say("Connecting…");
      call("GET", "/sim/v1/overview").then(function () {
        $("login").hidden = true;
        $("app").hidden = false;
        say("Connected; polling every " + POLL_MS / 1000 + " s.");
        poll();
        polling = setInterval(poll, POLL_MS);
        $("advance-seconds").focus();
      }).catch(function (error) {
        if (error.message !== "unauthenticated") { signOut(error.message); }
      });
    });
    $("advance-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var seconds = Number($("advance-seconds").value);
      advance({seconds: seconds}, "Advance by " + seconds + " s");
    });
    $("terminal-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var id = $("terminal-tx").value;
      if (!id) { say("Choose a transaction that is not terminal yet.", true); return; }
      advance({untilTerminal: id}, "Advance until " + id + " is terminal");
    });
    $("idle-button").addEventListener("click", function () {
      advance({untilIdle: true}, "Advance until idle");
    });
    $("checkpoint-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var name = $("checkpoint-name").value.trim();
      act("Checkpoint", "POST", "/sim/v1/checkpoints", name ? {name: name} : {});
    });
    ["filters", "log-filters"].forEach(function (id) {
      $(id).addEventListener("change", function () { poll(); });
      $(id).addEventListener("submit", function (event) { event.preventDefault(); poll(); });
    });
  }

  wire();
}());
