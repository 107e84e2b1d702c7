"""External programs and processes: pdflatex (``pdflatex``), Graphviz's ``dot`` (``graphviz``),
work forked into a child process (``forked``), and the process groups they run in
(``processes``). Printers (``symgpt.render``) only make text; the documents hand it to these."""
