/**
 * @file Gherkin and the .saffron dialect (StepSet / Fixture) for tree-sitter.
 * @license LicenseRef-Saffron-Free-Use-1.0
 *
 * Every token comes from the external scanner (src/scanner.c): Gherkin is line based and
 * its keywords depend on the `# language:` header, so the scanner classifies each line with
 * a keyword table generated from gherkin-languages.json (src/keywords.h) and this grammar
 * only says how lines nest.
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

module.exports = grammar({
  name: 'saffron',

  // The order must match `enum TokenType` in src/scanner.c.
  externals: $ => [
    $._language_start,
    $.language,
    $.comment,
    $._tag_examples, // first tag of a line whose tags belong to `Examples:`
    $._tag_rule, // ... to `Rule:`
    $._tag_other, // ... to any other block
    $.tag, // a further tag on the same line
    $._feature_keyword,
    $._rule_keyword,
    $._background_keyword,
    $._scenario_keyword,
    $._scenario_outline_keyword,
    $._examples_keyword,
    $._step_set_keyword,
    $._fixture_keyword,
    $._given_keyword,
    $._when_keyword,
    $._then_keyword,
    $._and_keyword,
    $._but_keyword,
    $._star_keyword,
    $._step_set_call_keyword,
    ':',
    $.title,
    $._description_line,
    $._text,
    $.placeholder,
    $.step_set_name,
    $._row_start,
    '|',
    $._cell_text,
    $.escape_sequence,
    $._trailing,
    $._doc_open,
    $.media_type,
    $._doc_content,
    $._doc_close,
    $._error_sentinel, // never used: valid only while the parser recovers from an error
  ],

  extras: $ => [/\s/, $.comment],

  rules: {
    source_file: $ => seq(
      optional($.language_header),
      optional($.feature),
    ),

    language_header: $ => seq(
      $._language_start,
      field('language', $.language),
    ),

    feature: $ => seq(
      optional($._tags),
      field('keyword', alias($._feature_keyword, $.keyword)),
      $._header,
      optional($.background),
      repeat($._scenario_definition),
      repeat($.rule),
    ),

    // Like saffron-syntax, the tree accepts a Fixture inside a Rule and Examples under a
    // StepSet or Fixture, and leaves them to its diagnostics (FixtureInRule,
    // StepSetWithExamples, FixtureWithExamples). Keeping the feature and rule bodies alike also
    // halves the parse table.
    rule: $ => seq(
      optional(alias($._rule_tags, $.tags)),
      field('keyword', alias($._rule_keyword, $.keyword)),
      $._header,
      optional($.background),
      repeat($._scenario_definition),
    ),

    background: $ => seq(
      field('keyword', alias($._background_keyword, $.keyword)),
      $._header,
      optional($._steps),
    ),

    _scenario_definition: $ => choice($.scenario, $.scenario_outline, $.step_set, $.fixture),

    scenario: $ => seq(
      optional($._tags),
      field('keyword', alias($._scenario_keyword, $.keyword)),
      $._header,
      optional($._steps),
      repeat($.examples),
    ),

    scenario_outline: $ => seq(
      optional($._tags),
      field('keyword', alias($._scenario_outline_keyword, $.keyword)),
      $._header,
      optional($._steps),
      repeat($.examples),
    ),

    examples: $ => seq(
      optional(alias($._examples_tags, $.tags)),
      field('keyword', alias($._examples_keyword, $.keyword)),
      $._header,
      optional(field('table', $.data_table)),
    ),

    // .saffron: `StepSet: <name>` defines a named list of steps.
    step_set: $ => seq(
      optional($._tags),
      field('keyword', alias($._step_set_keyword, $.keyword)),
      $._header,
      optional($._steps),
      repeat($.examples),
    ),

    // .saffron: `Fixture: <name>`, a feature-level block run once per feature.
    fixture: $ => seq(
      optional($._tags),
      field('keyword', alias($._fixture_keyword, $.keyword)),
      $._header,
      optional($._steps),
      repeat($.examples),
    ),

    // `: name` and the description lines under a block keyword.
    _header: $ => seq(
      ':',
      optional(field('name', $.title)),
      optional(field('description', $.description)),
    ),

    description: $ => repeat1($._description_line),

    _tags: $ => alias($._other_tags, $.tags),
    _other_tags: $ => tagLines($, $._tag_other),
    _rule_tags: $ => tagLines($, $._tag_rule),
    _examples_tags: $ => tagLines($, $._tag_examples),

    _steps: $ => repeat1(choice($.step, $.step_set_invocation)),

    step: $ => seq(
      field('keyword', $._step_keyword),
      optional(field('text', $.step_text)),
      optional($._step_arguments),
    ),

    _step_keyword: $ => choice(
      alias($._given_keyword, $.given_keyword),
      alias($._when_keyword, $.when_keyword),
      alias($._then_keyword, $.then_keyword),
      alias($._and_keyword, $.and_keyword),
      alias($._but_keyword, $.but_keyword),
      alias($._star_keyword, $.star_keyword),
    ),

    // A data table, a doc string, or one of each.
    _step_arguments: $ => choice(
      seq(field('argument', $.data_table), optional(field('argument', $.doc_string))),
      seq(field('argument', $.doc_string), optional(field('argument', $.data_table))),
    ),

    step_text: $ => repeat1(choice($._text, $.placeholder)),

    // .saffron: `StepSet <name>` (no colon) runs the steps of a set.
    step_set_invocation: $ => seq(
      field('keyword', alias($._step_set_call_keyword, $.keyword)),
      field('name', $.step_set_name),
    ),

    data_table: $ => repeat1($.table_row),

    table_row: $ => seq(
      alias($._row_start, '|'),
      repeat(seq(optional($.table_cell), '|')),
      optional($.trailing_content),
    ),

    table_cell: $ => repeat1(choice($._cell_text, $.escape_sequence)),

    // Text after the last pipe of a row: not a cell.
    trailing_content: $ => repeat1($._trailing),

    doc_string: $ => seq(
      field('delimiter', alias($._doc_open, $.delimiter)),
      optional(field('media_type', $.media_type)),
      optional(field('content', alias($._doc_content, $.content))),
      field('delimiter', alias($._doc_close, $.delimiter)),
    ),
  },
});

/**
 * One or more tag lines; the first tag of each line is the scanner's classified token.
 * @param {GrammarSymbols<string>} $
 * @param {RuleOrLiteral} first
 */
function tagLines($, first) {
  return repeat1(seq(alias(first, $.tag), repeat($.tag)));
}
