// MathJax 3 configuration for pymdownx.arithmatex (generic mode): \( \) inline, \[ \] display.
window.MathJax = {
  tex: {inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true, processEnvironments: true},
  options: {ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex"},
  svg: {fontCache: "global"}
};
