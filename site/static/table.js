// Sort, filter and search the suitability table. Without this script the table is complete and
// already in rank order; with it, column headers become sort buttons and the filter form appears.
(function () {
  "use strict";
  var table = document.getElementById("devices"), form = document.getElementById("controls");
  if (!table || !form) return;
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var heads = table.tHead.rows[0].cells, tiers = { excellent: 4, good: 3, marginal: 2, unsuitable: 1 };
  function key(row, i, type) {
    var cell = row.cells[i], text = cell.textContent.trim();
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
    var frag = document.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r); });
    body.appendChild(frag);
  }
  Array.prototype.forEach.call(heads, function (th, i) {
    var b = document.createElement("button");
    b.type = "button";
    while (th.firstChild) b.appendChild(th.firstChild);
    th.appendChild(b);
    b.addEventListener("click", function () { sortBy(i); });
  });
  var q = document.getElementById("q"), proto = document.getElementById("f-proto"), media = document.getElementById("f-media"),
      tier = document.getElementById("f-tier"), plp = document.getElementById("f-plp"), verified = document.getElementById("f-verified"), count = document.getElementById("count");
  function filter() {
    var words = q.value.toLowerCase().split(/\s+/).filter(Boolean), shown = 0;
    rows.forEach(function (r) {
      var text = (r.cells[1].textContent + " " + r.cells[15].textContent).toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; }) &&
        (!proto.value || r.getAttribute("data-p") === proto.value) &&
        (!media.value || r.getAttribute("data-m") === media.value) &&
        (!tier.value || r.cells[11].textContent.trim() === tier.value) &&
        (!plp.value || r.getAttribute("data-plp") === plp.value) &&
        (!verified.checked || r.hasAttribute("data-v"));
      r.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown + " of " + rows.length + " devices";
  }
  [q, proto, media, tier, plp, verified].forEach(function (el) { el.addEventListener("input", filter); el.addEventListener("change", filter); });
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  form.hidden = false;
})();
