; Step set names are project-wide; within one file the document is the scope, a
; `StepSet: <name>` block defines the name and a `StepSet <name>` step refers to it.
(source_file) @local.scope

(step_set
  name: (title) @local.definition)

(step_set_invocation
  name: (step_set_name) @local.reference)
