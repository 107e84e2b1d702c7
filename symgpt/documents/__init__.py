"""Documents: the one layer that loads models and runs queries to assemble something -- the
report (``report``, ``reportparts``), LaTeX fragments and documents (``latex_doc``) and the
contexts of their sections (``latex_sections``, ``latex_steps``, ``latex_costs``,
``latex_selftest``), scaling tables (``tables``), the interactive page (``html``).
The printers they use live in ``symgpt.render`` and are given finished objects."""
