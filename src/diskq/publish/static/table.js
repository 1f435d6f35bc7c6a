// Sort, filter and search the suitability table. Without this script the table is complete and
// already in rank order; with it, column headers become sort buttons, the filter form appears,
// the caption says how the rows are sorted and filtered, and an empty result says why.
(function () {
  "use strict";
  var table = document.getElementById("devices"), form = document.getElementById("controls");
  if (!table || !form) return;
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var heads = table.tHead.rows[0].cells, tiers = { excellent: 4, good: 3, marginal: 2, unsuitable: 1 };
  var caption = document.getElementById("caption"), empty = document.getElementById("empty");
  var sorted = { i: 0, dir: 1 };  // the server's order: rank ascending

  // --- search: small typos tolerated, the way `diskq lookup` ranks models ---------------------
  // A query word found in the model, vendor or firmware (letters and digits only, case ignored)
  // is a match. When no device matches every word that way, close matches are shown instead:
  // each word scores 0.3 x the share of its trigrams found in the text + 0.7 x its best
  // similarity to a same-length window of the text (2 x longest common subsequence / both
  // lengths, so a swapped or wrong letter costs little); a device is close when every word (or
  // the whole query run together) scores at least MIN_SCORE, and no more than CLOSE_MARGIN
  // below the closest device (lookup lists the closest first; a loose query should not bring
  // every model of a vendor along).
  var MIN_SCORE = 0.5, SHARED_WEIGHT = 0.3, EDIT_WEIGHT = 0.7, CLOSE_MARGIN = 0.1;
  function compact(s) {
    return (s.normalize ? s.normalize("NFKC") : s).toLowerCase().replace(/[^a-z0-9]+/g, "");
  }
  function trigrams(t) {
    var out = {};
    if (t.length < 3) { if (t) out[t] = 1; return out; }
    for (var i = 0; i + 3 <= t.length; i++) out[t.substr(i, 3)] = 1;
    return out;
  }
  function lcs(a, b) {
    var prev = new Array(b.length + 1).fill(0), cur;
    for (var i = 1; i <= a.length; i++) {
      cur = [0];
      for (var j = 1; j <= b.length; j++)
        cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
      prev = cur;
    }
    return prev[b.length];
  }
  function similarity(q, text) {  // both compacted
    if (!q || !text) return 0;
    if (text.indexOf(q) >= 0) return 1;
    var tq = trigrams(q), tt = trigrams(text), n = 0, hit = 0, edit = 0;
    for (var g in tq) { n++; if (tt[g]) hit++; }
    var width = q.length, last = Math.max(1, text.length - width + 1);
    for (var i = 0; i < last; i++) {
      var w = text.substr(i, width);
      edit = Math.max(edit, 2 * lcs(q, w) / (q.length + w.length));
    }
    return SHARED_WEIGHT * (n ? hit / n : 0) + EDIT_WEIGHT * edit;
  }
  var pub = document.getElementById("public-figures");
  var prows = pub ? Array.prototype.slice.call(pub.tBodies[0].rows) : [];
  var textOf = new Map(rows.concat(prows).map(function (r) { return [r, compact(r.getAttribute("data-s") || r.cells[1].textContent)]; }));
  // A part number or the string smartctl prints (SAMSUNG MZ7LH7T6HMLA-00005) names a model through
  // the part-number patterns of its product line (sources/lines, in data-re).
  // A leading vendor word (data-vendors, written once) is optional, as diskq reads a model string.
  var vendors = table.getAttribute("data-vendors") || "";
  var lead = vendors ? "(?:(?:" + vendors + ")[ _-]+)?" : "";
  var patternsOf = new Map(rows.concat(prows).map(function (r) {
    var list = [];
    try { list = JSON.parse(r.getAttribute("data-re") || "[]"); } catch (e) { list = []; }
    return [r, list.map(function (p) { try { return new RegExp("^" + lead + "(?:" + p + ")$", "i"); } catch (e) { return null; } })
      .filter(Boolean)];
  }));
  function partOf(query, r) {
    var text = query.trim().replace(/\s+/g, " ");
    if (text.length < 6) return false;
    return patternsOf.get(r).some(function (re) { return re.test(text); });
  }
  function search(query, list) {  // {mode: "all" | "exact" | "close", ok: [bool per row, in the list's current order]}
    list = list || rows;
    var words = query.split(/\s+/).map(compact).filter(Boolean), whole = compact(query);
    var texts = list.map(function (r) { return textOf.get(r); });
    if (!words.length) return { mode: "all", ok: list.map(function () { return true; }) };
    var exact = texts.map(function (t, k) {
      return t.indexOf(whole) >= 0 || words.every(function (w) { return t.indexOf(w) >= 0; }) || partOf(query, list[k]);
    });
    if (exact.some(Boolean)) return { mode: "exact", ok: exact };
    var scores = texts.map(function (t) {
      return Math.max(similarity(whole, t), Math.min.apply(null, words.map(function (w) { return similarity(w, t); })));
    });
    var floor = Math.max(MIN_SCORE, Math.max.apply(null, scores) - CLOSE_MARGIN);
    return { mode: "close", ok: scores.map(function (sc) { return sc >= floor; }) };
  }

  // --- sorting -------------------------------------------------------------------------------
  function label(th) { return th.getAttribute("data-label") || th.textContent.trim(); }
  function key(row, i, type) {
    var cell = row.cells[i], text = (cell.getAttribute("data-k") || cell.textContent).trim();
    if (type === "tier") return tiers[text] || 0;
    if (type !== "num") return text.toLowerCase();
    var n = parseFloat(cell.getAttribute("data-n") || text.replace(/,/g, ""));
    return isNaN(n) ? -Infinity : n;
  }
  function sortBy(i) {
    var th = heads[i], type = th.getAttribute("data-type") || "text";
    var dir = th.getAttribute("aria-sort") === "descending" ? 1 : th.getAttribute("aria-sort") === "ascending" ? -1
      : (type === "text" ? 1 : -1);  // first click: numbers high to low, text A to Z
    rows.sort(function (a, b) { var x = key(a, i, type), y = key(b, i, type); return x < y ? -dir : x > y ? dir : 0; });
    for (var j = 0; j < heads.length; j++) heads[j].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    sorted = { i: i, dir: dir };
    var frag = document.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r); });
    body.appendChild(frag);
    describe();
  }
  function sortText() {
    var th = heads[sorted.i], type = th.getAttribute("data-type") || "text";
    if (sorted.i === 0) return "sorted by 1-job IOPS within each method class (" + caption.getAttribute("data-main") + " first)"
      + (sorted.dir === 1 ? "" : ", lowest first");
    var way = type === "text" ? (sorted.dir === 1 ? "A to Z" : "Z to A")
      : type === "tier" ? (sorted.dir === 1 ? "worst first" : "best first")
      : (sorted.dir === 1 ? "low to high" : "high to low");
    return "sorted by " + label(th) + ", " + way;
  }

  // --- filters, caption and the empty result --------------------------------------------------
  var q = document.getElementById("q"), proto = document.getElementById("f-proto"), media = document.getElementById("f-media"),
      tier = document.getElementById("f-tier"), plp = document.getElementById("f-plp"), verified = document.getElementById("f-verified"),
      mclass = document.getElementById("f-class"), source = document.getElementById("f-src"),
      count = document.getElementById("count"), pcaption = document.getElementById("public-caption"),
      filtersOn = document.getElementById("filters-on"), folded = document.getElementById("filters");
  var state = { shown: rows.length, mode: "all" };
  function active() {
    var out = [];
    if (q.value.trim()) out.push((state.mode === "close" ? "close matches for \u201c" : "search \u201c") + q.value.trim() + "\u201d");
    if (proto.value) out.push("protocol " + proto.value);
    if (media.value) out.push("media " + media.value);
    if (tier.value) out.push("Ceph WAL/DB " + tier.value);
    if (plp.value) out.push("power-loss protection " + plp.value);
    if (mclass.value) out.push("method class " + mclass.options[mclass.selectedIndex].text);
    if (source.value) out.push("source " + source.value);
    if (verified.checked) out.push("verified only");
    return out;
  }
  function describe() {
    var filters = active(), total = rows.length;
    var what = filters.length ? state.shown + " of " + total + " devices (" + filters.join(", ") + ")" : total + " devices";
    caption.textContent = what + ", " + sortText();
    count.textContent = state.shown + " of " + total + " devices";
    var set = filters.length - (q.value.trim() ? 1 : 0);  // the folded filters say how many are set
    filtersOn.textContent = set ? " (" + set + " set)" : "";
    if (state.shown) { empty.hidden = true; empty.textContent = ""; return; }
    empty.textContent = "";
    var why, more = null;
    if (verified.checked && table.getAttribute("data-verified") === "0") {
      why = "No device has a verified submission in this database: " +
        (table.getAttribute("data-signers") === "none"
          ? "it was built without an allowed-signers file, so no signature was checked against a listed key. "
          : "no signature matched a key listed for its GitHub login. ") +
        "Signed submissions are still in the table. ";
      more = { href: "methodology.html#aggregation", text: "What \u201cverified\u201d means" };
    } else {
      why = "No device matches " + filters.join(", ") + "." +
        (q.value.trim() ? " The search allows small typos in the model, vendor or firmware; fewer words find more." : "");
    }
    empty.appendChild(document.createTextNode(why));
    if (more) {
      var a = document.createElement("a");
      a.href = more.href;
      a.textContent = more.text;
      empty.appendChild(a);
      empty.appendChild(document.createTextNode("."));
    }
    var reset = document.createElement("button");
    reset.type = "button";
    reset.textContent = "Show all devices";
    reset.addEventListener("click", function () {
      q.value = ""; proto.value = ""; media.value = ""; tier.value = ""; plp.value = ""; verified.checked = false;
      mclass.value = ""; source.value = "";
      filter();
    });
    empty.appendChild(reset);
    empty.hidden = false;
  }
  function filter() {
    var found = search(q.value), shown = 0;
    rows.forEach(function (r, k) {
      var ok = found.ok[k] &&
        (!proto.value || r.getAttribute("data-p") === proto.value) &&
        (!media.value || r.getAttribute("data-m") === media.value) &&
        (!tier.value || r.getAttribute("data-t") === tier.value) &&
        (!plp.value || r.getAttribute("data-plp") === plp.value) &&
        (!verified.checked || r.hasAttribute("data-v")) && common(r);
      r.hidden = !ok;
      if (ok) shown++;
    });
    state = { shown: shown, mode: found.mode };
    describe();
    filterPublic();
  }
  function common(r) {  // the filters the public figures share with the table
    return (!mclass.value || r.getAttribute("data-c") === mclass.value) &&
      (!source.value || (" " + r.getAttribute("data-src") + " ").indexOf(" " + source.value + " ") >= 0);
  }
  function filterPublic() {  // no verdicts, media or signatures there: those filters leave no public row
    if (!pub) return;
    var found = search(q.value, prows), shown = 0;
    prows.forEach(function (r, k) {
      var ok = found.ok[k] && (!proto.value || r.getAttribute("data-p") === proto.value) && common(r) &&
        !media.value && !tier.value && !plp.value && !verified.checked;
      r.hidden = !ok;
      if (ok) shown++;
    });
    var filters = active();
    pcaption.textContent = (filters.length ? shown + " of " + prows.length : prows.length) +
      " public figures by model and class" + (filters.length ? " (" + filters.join(", ") + ")" : "");
  }
  Array.prototype.forEach.call(heads, function (th, i) {
    var b = document.createElement("button");
    b.type = "button";
    while (th.firstChild) b.appendChild(th.firstChild);
    th.appendChild(b);
    b.addEventListener("click", function () { sortBy(i); });
  });
  [q, proto, media, tier, plp, verified, mclass, source].forEach(function (el) { el.addEventListener("input", filter); el.addEventListener("change", filter); });
  form.addEventListener("submit", function (e) { e.preventDefault(); filter(); });  // the Filter button (Enter in the search box)
  // the filters fold behind one control on a phone (the table's first rows on its first screen);
  // a wider screen has room for them, open
  if (window.matchMedia && window.matchMedia("(min-width: 880px)").matches) folded.open = true;
  form.hidden = false;
})();
