// The graph view: the wiki's pages and links (and sources) drawn by Cytoscape.js. A click on a
// page or a source opens it. When the layout has run, #graph gets data-ready and data-ms.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("graph");
    var state = document.getElementById("graph-state");
    if (!box || typeof cytoscape !== "function") { return; }
    var started = performance.now();
    fetch(box.getAttribute("data-url"), { credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (graph) {
        var count = graph.nodes.length;
        var cy = cytoscape({
          container: box,
          elements: { nodes: graph.nodes, edges: graph.edges },
          style: [
            { selector: "node", style: { "label": "data(label)", "font-size": 9, "background-color": "#1d4ed8", "color": "#111", "width": 12, "height": 12, "text-valign": "bottom", "min-zoomed-font-size": 7 } },
            { selector: "node.orphan", style: { "background-color": "#f59e0b", "border-width": 2, "border-color": "#92400e" } },
            { selector: "node.missing", style: { "background-color": "#fff", "border-width": 2, "border-style": "dashed", "border-color": "#b91c1c", "color": "#b91c1c" } },
            { selector: "node.source", style: { "shape": "round-rectangle", "background-color": "#047857" } },
            { selector: "edge", style: { "width": 1, "line-color": "#94a3b8", "target-arrow-shape": "triangle", "target-arrow-color": "#94a3b8", "curve-style": "haystack" } },
            { selector: "edge.broken", style: { "line-color": "#b91c1c", "line-style": "dashed" } },
            { selector: "edge.cites", style: { "line-color": "#6ee7b7", "target-arrow-shape": "none" } }
          ],
          layout: count <= 100
            ? { name: "cose", animate: false, numIter: 400, randomize: false }
            : { name: "concentric", animate: false, minNodeSpacing: 4,
                concentric: function (node) { return node.degree(); },
                levelWidth: function () { return 2; } }
        });
        cy.on("tap", "node", function (event) {
          var href = event.target.data("href");
          if (href) { window.location.href = box.getAttribute("data-base") + href; }
        });
        var ms = Math.round(performance.now() - started);
        box.setAttribute("data-ms", String(ms));
        box.setAttribute("data-ready", "1");
        state.textContent = "Drawn: " + count + " node(s), " + graph.edges.length + " edge(s).";
        window.deskGraph = cy;
      })
      .catch(function (error) { state.textContent = "The graph could not be drawn: " + error; });
  });
}());
