[
  (feature)
  (rule)
  (background)
  (scenario)
  (scenario_outline)
  (examples)
  (step_set)
  (fixture)
  (data_table)
  (doc_string)
  (description)
] @fold
