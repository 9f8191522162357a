// Sortable and filterable tables (class "sortable"), no library: a click on a column header
// sorts by it (again: the other way), numbers as numbers; tables of more than FILTER_ROWS
// rows get a box above them that keeps the rows containing what is typed.
(function () {
  var FILTER_ROWS = 12;
  function key(cell) {
    var text = cell.textContent.trim();
    var n = parseFloat(text.replace(/[,±×%\[\]]/g, ""));
    return isNaN(n) ? text.toLowerCase() : n;
  }
  function sort(table, col, th) {
    var rows = Array.prototype.slice.call(table.rows, 1);
    var down = th.getAttribute("aria-sort") === "ascending";
    rows.sort(function (a, b) {
      var x = a.cells[col] ? key(a.cells[col]) : "", y = b.cells[col] ? key(b.cells[col]) : "";
      var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
      return down ? -c : c;
    });
    Array.prototype.forEach.call(table.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", down ? "descending" : "ascending");
    rows.forEach(function (r) { r.parentNode.appendChild(r); });
  }
  function filter(table, text) {
    var words = text.toLowerCase().split(/\s+/).filter(Boolean);
    Array.prototype.slice.call(table.rows, 1).forEach(function (r) {
      var t = r.textContent.toLowerCase();
      r.hidden = !words.every(function (w) { return t.indexOf(w) >= 0; });
    });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    Array.prototype.forEach.call(table.rows[0].cells, function (th, col) {
      th.title = "sort by this column";
      th.addEventListener("click", function () { sort(table, col, th); });
    });
    if (table.rows.length - 1 > FILTER_ROWS) {
      var box = document.createElement("input");
      box.type = "search";
      box.className = "filter";
      box.placeholder = "filter " + (table.rows.length - 1) + " rows (words, all must match)";
      box.addEventListener("input", function () { filter(table, box.value); });
      table.parentNode.insertBefore(box, table);
    }
  });
})();
