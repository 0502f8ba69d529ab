; Gherkin and .saffron highlighting.

(comment) @comment @spell

(language_header) @keyword.directive
(language_header
  language: (language) @string.special)

; Block keywords (Feature, Rule, Background, Scenario, Scenario Outline, Examples,
; StepSet, Fixture) and the `StepSet` of an invocation.
(keyword) @keyword

[
  (given_keyword)
  (when_keyword)
  (then_keyword)
] @keyword

[
  (and_keyword)
  (but_keyword)
  (star_keyword)
] @keyword.operator

":" @punctuation.delimiter

[
  (feature name: (title) @markup.heading)
  (rule name: (title) @markup.heading)
  (background name: (title) @markup.heading)
  (scenario name: (title) @markup.heading)
  (scenario_outline name: (title) @markup.heading)
  (examples name: (title) @markup.heading)
  (fixture name: (title) @markup.heading)
]

(description) @comment.documentation @spell

(tag) @attribute

(step_text) @string
(placeholder) @variable.parameter

(step_set
  name: (title) @function)
(step_set_invocation
  name: (step_set_name) @function.call)

(table_row
  "|" @punctuation.delimiter)
(table_cell) @string
(escape_sequence) @string.escape
(trailing_content) @comment

(doc_string
  (delimiter) @punctuation.delimiter)
(media_type) @label
(content) @markup.raw.block
