(function () {
  "use strict";
  // The passed findings and the inventory tables travel gzip-compressed and
  // base64-encoded (see gpuaudit/report/html.py).
  function unpack(id) {
    var text = atob(document.getElementById(id).textContent.trim());
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }
  start(JSON.parse(document.getElementById("gpuaudit-data").textContent));

  function start(data) {
    var SEV = data.severities;
    var SEV_RANK = {};
    SEV.forEach(function (s, i) { SEV_RANK[s] = i; });
    var STATUS_RANK = { fail: 0, unproven: 1, waived: 2, pass: 3 };
    var STATUS_WORD = {
      fail: "failed", notice: "notice", unproven: "not proven", waived: "waived", pass: "passed"
    };
    var OPEN = ["fail", "unproven"];  // shown at first: what is still to fix or to prove
    var PAGE = 50;
    var INV_PAGE = 100;
    var nf = new Intl.NumberFormat("en-US");

    function el(tag, cls, text) {
      var node = document.createElement(tag);
      if (cls) node.className = cls;
      if (text !== undefined && text !== null) node.textContent = String(text);
      return node;
    }
    function $(id) { return document.getElementById(id); }
    var collator = new Intl.Collator(undefined, { numeric: true });
    function cmpText(a, b) { return collator.compare(String(a), String(b)); }

    // Findings: [severity, status, rule, object, kind, cluster, host, message, evidence, waiver,
    // and with history: age in days, first seen]
    var F = data.findings;
    var AGES = Boolean(data.ages);
    var STATES = data.states || null;  // with a baseline: new, unchanged or "" per finding
    var FINDING_COLUMNS = AGES ? 8 : 7;
    var rules = data.rules;
    var hay = [];
    // Passed findings and the inventory tables: unpacked the first time they are needed.
    var more = null, loaded = false;
    function ensureMore() {
      if (!more) {
        more = unpack("gpuaudit-more").then(function (m) {
          F = F.concat(m.findings);
          data.tables = m.tables;
          loaded = true;
        }).catch(function (e) {
          console.error("gpuaudit: the passed findings and inventory could not be read: " + e);
        });
      }
      return more;
    }
    // Work that waits for them; window.gpuauditPending lets a test wait for it too.
    function afterMore(then) {
      window.gpuauditPending = ensureMore().then(then);
    }
    var state = {
      sev: new Set(SEV), status: new Set(["fail"]), rule: "", cluster: "", q: "",
      sort: 0, dir: 1, page: 0, open: -1
    };

    function haystack(i) {
      if (hay[i] === undefined) {
        var f = F[i];
        hay[i] = [f[2], f[3], f[4], f[5], f[6], f[7], (rules[f[2]] || [""])[0]].join("\n").toLowerCase();
      }
      return hay[i];
    }
    function matches(i) {
      var f = F[i];
      if (!state.sev.has(f[0]) || !state.status.has(f[1])) return false;
      if (state.rule && f[2] !== state.rule) return false;
      if (state.cluster && f[5] !== state.cluster) return false;
      return !state.q || haystack(i).indexOf(state.q) >= 0;
    }
    function compare(a, b) {
      var fa = F[a], fb = F[b], c, col = state.sort;
      if (col === 0) c = SEV_RANK[fa[0]] - SEV_RANK[fb[0]];
      else if (col === 1) c = STATUS_RANK[fa[1]] - STATUS_RANK[fb[1]];
      else c = cmpText(fa[col], fb[col]);
      return c * state.dir || STATUS_RANK[fa[1]] - STATUS_RANK[fb[1]] ||
        SEV_RANK[fa[0]] - SEV_RANK[fb[0]] || cmpText(fa[2], fb[2]) || cmpText(fa[3], fb[3]);
    }

    // A rule's published sources as links; only https URLs become links, and a
    // link opens without giving the page a handle on this report.
    function references(refs) {
      if (!refs || !refs.length) return "";
      var list = el("ul", "refs");
      refs.forEach(function (ref) {
        var li = el("li");
        if (/^https:\/\//.test(ref[1])) {
          var a = el("a", "", ref[0]);
          a.href = ref[1];
          a.rel = "noopener noreferrer";
          a.target = "_blank";
          li.appendChild(a);
        } else {
          li.textContent = ref[0] + " (" + ref[1] + ")";
        }
        list.appendChild(li);
      });
      return list;
    }

    function detailRow(i) {
      var f = F[i], rule = rules[f[2]] || ["", "", "", "", []];
      var tr = el("tr", "detail"), td = el("td"), dl = el("dl");
      td.colSpan = FINDING_COLUMNS;
      function item(label, value) {
        if (value === undefined || value === null || value === "") return;
        dl.appendChild(el("dt", "", label));
        var dd = el("dd");
        if (value instanceof Node) dd.appendChild(value); else dd.textContent = String(value);
        dl.appendChild(dd);
      }
      item("Rule", f[2] + (rule[0] ? " \u2014 " + rule[0] : ""));
      item("Category", rule[1]);
      item("Object", f[4] + " " + f[3]);
      item("Cluster", f[5]);
      item("Host", f[6]);
      item("Verdict", STATUS_WORD[f[1]] + ", " + f[0] + ": " + f[7]);
      var keys = f[8] ? Object.keys(f[8]) : [];
      if (keys.length) {
        var table = el("table", "evidence");
        keys.forEach(function (k) {
          var row = el("tr"), v = f[8][k];
          row.appendChild(el("td", "", k));
          row.appendChild(el("td", "", typeof v === "string" ? v : JSON.stringify(v, null, 1)));
          table.appendChild(row);
        });
        item("Evidence", table);
      }
      item("Remediation", rule[2]);
      item("Why it matters", rule[3]);
      item("References", references(rule[4]));
      if (f[9]) item("Waiver", f[9][0] + " (" + f[9][1] + ", until " + f[9][2] + ")");
      if (AGES) item("First seen", f[11]);
      td.appendChild(dl);
      tr.appendChild(td);
      return tr;
    }

    function renderFindings() {
      var body = $("findings-body");
      if (state.status.has("pass") && !loaded) {
        $("findings-pager").textContent = "Unpacking the passed results\u2026";
        afterMore(renderFindings);
        return;
      }
      var rows = [];
      for (var i = 0; i < F.length; i++) if (matches(i)) rows.push(i);
      rows.sort(compare);
      var pages = Math.max(1, Math.ceil(rows.length / PAGE));
      if (state.page >= pages) state.page = pages - 1;
      var start = state.page * PAGE, shown = rows.slice(start, start + PAGE);
      var frag = document.createDocumentFragment();
      shown.forEach(function (i) {
        var f = F[i], tr = el("tr", "row" + (state.open === i ? " open" : ""));
        tr.tabIndex = 0;
        tr.dataset.index = String(i);
        tr.dataset.severity = f[0];
        tr.dataset.status = f[1];
        var sev = el("td"); sev.appendChild(el("span", "sevtag sev-" + f[0], f[0]));
        tr.appendChild(sev);
        // An info finding that fails is a notice; with a baseline, an open one is new or unchanged.
        var word = f[0] === "info" && f[1] === "fail" ? "notice" : f[1];
        var mark = STATES && STATES[i] ? " (" + STATES[i] + ")" : "";
        tr.appendChild(el("td", "status-" + word, STATUS_WORD[word] + mark));
        var rule = el("td", "", f[2]); rule.title = (rules[f[2]] || [""])[0];
        tr.appendChild(rule);
        tr.appendChild(el("td", "", f[3]));
        tr.appendChild(el("td", "", f[5]));
        tr.appendChild(el("td", "", f[7]));
        var fix = el("td", "fix", (rules[f[2]] || ["", "", ""])[2]);
        fix.title = fix.textContent;
        tr.appendChild(fix);
        if (AGES) {
          var age = el("td", "", String(f[10]));
          if (f[11]) age.title = "first seen " + f[11];
          tr.appendChild(age);
        }
        frag.appendChild(tr);
        if (state.open === i) frag.appendChild(detailRow(i));
      });
      body.replaceChildren(frag);
      if (!rows.length) {
        var tr = el("tr"), td = el("td", "empty", "No findings match these filters.");
        td.colSpan = FINDING_COLUMNS; tr.appendChild(td); body.appendChild(tr);
      }
      pager($("findings-pager"), state.page, pages, rows.length, start, shown.length, function (p) {
        state.page = p; renderFindings();
      });
      var hidden = [];
      ["unproven", "waived", "pass"].forEach(function (s) {
        if (state.status.has(s)) return;
        var n = s === "pass" ? data.passed : F.filter(function (f) { return f[1] === s; }).length;
        if (n) hidden.push(nf.format(n) + " " + STATUS_WORD[s]);
      });
      $("f-hidden").textContent = hidden.length ?
        hidden.join(" and ") + " results are collapsed: use the status buttons to show them." : "";
      document.querySelectorAll("#findings-table th button").forEach(function (b) {
        var col = Number(b.dataset.sort);
        if (col === state.sort) b.dataset.dir = state.dir > 0 ? "asc" : "desc";
        else delete b.dataset.dir;
      });
    }

    function pager(node, page, pages, total, start, count, go) {
      node.replaceChildren();
      var prev = el("button", "", "\u2039 Previous"), next = el("button", "", "Next \u203A");
      prev.type = next.type = "button";
      prev.disabled = page <= 0;
      next.disabled = page >= pages - 1;
      prev.addEventListener("click", function () { go(page - 1); });
      next.addEventListener("click", function () { go(page + 1); });
      var text = total ? "Showing " + nf.format(start + 1) + "\u2013" + nf.format(start + count) +
        " of " + nf.format(total) : "Nothing to show";
      node.appendChild(prev);
      node.appendChild(el("span", "pager-text", text));
      node.appendChild(next);
    }

    function chipset(id, key) {
      $(id).querySelectorAll("button").forEach(function (b) {
        b.addEventListener("click", function () {
          var set = state[key], v = b.dataset.value;
          if (set.has(v)) set.delete(v); else set.add(v);
          b.setAttribute("aria-pressed", set.has(v) ? "true" : "false");
          state.page = 0; state.open = -1; renderFindings();
        });
      });
    }
    function syncChips() {
      [["f-severity", state.sev], ["f-status", state.status]].forEach(function (p) {
        $(p[0]).querySelectorAll("button").forEach(function (b) {
          b.setAttribute("aria-pressed", p[1].has(b.dataset.value) ? "true" : "false");
        });
      });
      $("f-rule").value = state.rule;
      $("f-cluster").value = state.cluster;
      $("f-search").value = state.q;
    }
    function showFindings() {
      state.page = 0; state.open = -1; syncChips(); renderFindings();
      $("findings").scrollIntoView();
    }

    chipset("f-severity", "sev");
    chipset("f-status", "status");
    $("f-rule").addEventListener("change", function (e) { state.rule = e.target.value; state.page = 0; renderFindings(); });
    $("f-cluster").addEventListener("change", function (e) { state.cluster = e.target.value; state.page = 0; renderFindings(); });
    var timer = 0;
    $("f-search").addEventListener("input", function (e) {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = e.target.value.trim().toLowerCase(); state.page = 0; renderFindings(); }, 150);
    });
    $("f-reset").addEventListener("click", function () {
      state.sev = new Set(SEV); state.status = new Set(OPEN); state.rule = ""; state.cluster = "";
      state.q = ""; showFindings();
    });
    document.querySelectorAll(".tile[data-severity]").forEach(function (t) {
      t.addEventListener("click", function () {
        state.sev = new Set([t.dataset.severity]); state.status = new Set(OPEN);
        state.rule = ""; state.cluster = ""; state.q = ""; showFindings();
      });
    });
    document.querySelectorAll("button[data-cluster]").forEach(function (b) {
      b.addEventListener("click", function () {
        state.sev = new Set(SEV); state.status = new Set(OPEN); state.rule = "";
        state.cluster = b.dataset.cluster; state.q = ""; showFindings();
      });
    });
    document.querySelectorAll("button[data-rule]").forEach(function (b) {
      b.addEventListener("click", function () {
        state.sev = new Set(SEV); state.status = new Set(OPEN); state.rule = b.dataset.rule;
        state.cluster = ""; state.q = ""; showFindings();
      });
    });
    document.querySelectorAll("#findings-table th button").forEach(function (b) {
      b.addEventListener("click", function () {
        var col = Number(b.dataset.sort);
        state.dir = state.sort === col ? -state.dir : 1;
        state.sort = col; renderFindings();
      });
    });
    function toggle(tr) {
      if (!tr || !tr.dataset.index) return;
      var i = Number(tr.dataset.index);
      state.open = state.open === i ? -1 : i;
      renderFindings();
    }
    $("findings-body").addEventListener("click", function (e) { toggle(e.target.closest("tr.row")); });
    $("findings-body").addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(e.target.closest("tr.row")); }
    });

    // Inventory tables: drawn the first time their section opens, a page at a time.
    function inventoryTable(host, t) {
      var st = { q: "", sort: -1, dir: 1, page: 0 };
      var tools = el("div", "inv-tools");
      var search = el("input");
      search.type = "search"; search.placeholder = "Filter " + t.title + "\u2026";
      search.setAttribute("aria-label", "Filter " + t.title);
      tools.appendChild(search);
      var wrap = el("div", "table-wrap"), table = el("table", "grid"), thead = el("thead"),
        tbody = el("tbody"), head = el("tr"), pg = el("div", "pager");
      t.columns.forEach(function (c, i) {
        var th = el("th"), b = el("button", "", c[0]);
        b.type = "button";
        b.addEventListener("click", function () {
          st.dir = st.sort === i ? -st.dir : 1; st.sort = i; draw();
          head.querySelectorAll("button").forEach(function (x) { delete x.dataset.dir; });
          b.dataset.dir = st.dir > 0 ? "asc" : "desc";
        });
        th.appendChild(b); head.appendChild(th);
      });
      thead.appendChild(head); table.appendChild(thead); table.appendChild(tbody);
      wrap.appendChild(table);
      host.appendChild(tools); host.appendChild(wrap); host.appendChild(pg);
      var text = t.rows.map(function (r) { return r.join("\n").toLowerCase(); });
      function cell(v, type) {
        if (v === null || v === undefined) return "";
        if (type === "bool") return v ? "yes" : "no";
        if (type === "int" || type === "float") return nf.format(v);
        return v;
      }
      function draw() {
        var idx = [];
        for (var i = 0; i < t.rows.length; i++) if (!st.q || text[i].indexOf(st.q) >= 0) idx.push(i);
        if (st.sort >= 0) {
          var s = st.sort, num = ["int", "float"].indexOf(t.columns[s][1]) >= 0;
          idx.sort(function (a, b) {
            var x = t.rows[a][s], y = t.rows[b][s];
            if (x === null || x === undefined) return 1;
            if (y === null || y === undefined) return -1;
            return (num ? x - y : cmpText(x, y)) * st.dir;
          });
        }
        var pages = Math.max(1, Math.ceil(idx.length / INV_PAGE));
        if (st.page >= pages) st.page = pages - 1;
        var start = st.page * INV_PAGE, shown = idx.slice(start, start + INV_PAGE);
        var frag = document.createDocumentFragment();
        shown.forEach(function (i) {
          var tr = el("tr");
          t.rows[i].forEach(function (v, j) {
            var type = t.columns[j][1];
            tr.appendChild(el("td", type === "int" || type === "float" ? "num" : "", cell(v, type)));
          });
          frag.appendChild(tr);
        });
        tbody.replaceChildren(frag);
        if (!idx.length) {
          var tr = el("tr"), td = el("td", "empty", t.rows.length ? "No rows match." : "None.");
          td.colSpan = t.columns.length; tr.appendChild(td); tbody.appendChild(tr);
        }
        pager(pg, st.page, pages, idx.length, start, shown.length, function (p) { st.page = p; draw(); });
      }
      var timer2 = 0;
      search.addEventListener("input", function () {
        clearTimeout(timer2);
        timer2 = setTimeout(function () { st.q = search.value.trim().toLowerCase(); st.page = 0; draw(); }, 150);
      });
      draw();
    }
    document.querySelectorAll("details.inv").forEach(function (d) {
      d.addEventListener("toggle", function () {
        if (d.open && !d.dataset.drawn) {
          d.dataset.drawn = "1";
          afterMore(function () {
            inventoryTable(d.querySelector(".inv-body"), data.tables[Number(d.dataset.table)]);
          });
        }
      });
    });
    if (location.hash.indexOf("#inv-") === 0) {
      var target = document.querySelector(location.hash.replace(/[^#\w-]/g, ""));
      if (target && target.tagName === "DETAILS") target.open = true;
    }
    document.querySelectorAll("a[href^='#inv-']").forEach(function (a) {
      a.addEventListener("click", function () {
        var d = document.querySelector(a.getAttribute("href"));
        if (d) d.open = true;
      });
    });

    renderFindings();
    window.gpuauditReady = true;
  }
}());
