// External scanner for tree-sitter-saffron.
//
// Gherkin is line based: what a line is (comment, tags, table row, doc string delimiter,
// block header, step, description) is decided by how it starts, and the keywords depend on
// the `# language:` header. The scanner therefore produces every token itself:
//
// * at the start of a line it classifies the line, matching keywords of the current
//   dialect against a table generated from gherkin-languages.json (keywords.h);
// * inside a line it produces the tokens that line kind allows (colon and title after a
//   block keyword, text and placeholders after a step keyword, cells in a table row...);
// * inside a doc string it produces the whole content up to the matching delimiter.
//
// Its state is the dialect, the kind of the current line and the open doc string
// delimiter, so the same text always lexes the same way, also during error recovery.
//
// Like Cucumber's parser, a keyword line that is not allowed where it stands becomes a
// description line when a description is allowed there (`Given x` right under `Feature:`).

#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keywords.h"

enum TokenType {
  LANGUAGE_START,
  LANGUAGE,
  COMMENT,
  TAG_EXAMPLES,
  TAG_RULE,
  TAG_OTHER,
  TAG,
  FEATURE_KW,
  RULE_KW,
  BACKGROUND_KW,
  SCENARIO_KW,
  SCENARIO_OUTLINE_KW,
  EXAMPLES_KW,
  STEP_SET_KW,
  FIXTURE_KW,
  GIVEN_KW,
  WHEN_KW,
  THEN_KW,
  AND_KW,
  BUT_KW,
  STAR_KW,
  STEP_SET_CALL_KW,
  COLON,
  TITLE,
  DESCRIPTION_LINE,
  TEXT,
  PLACEHOLDER,
  STEP_SET_NAME,
  ROW_START,
  PIPE,
  CELL_TEXT,
  ESCAPE_SEQUENCE,
  TRAILING,
  DOC_OPEN,
  MEDIA_TYPE,
  DOC_CONTENT,
  DOC_CLOSE,
  ERROR_SENTINEL,
};

// What the rest of the current line may hold.
enum LineMode {
  LINE_START,    // nothing lexed on this line yet
  LINE_DONE,     // the line is complete; only whitespace may follow
  LINE_BLOCK,    // after a block keyword: ':'
  LINE_TITLE,    // after the colon: the title
  LINE_STEP,     // after a step keyword: text and placeholders
  LINE_CALL,     // after `StepSet`: the set's name
  LINE_ROW,      // inside a table row
  LINE_TAGS,     // inside a tag line
  LINE_LANGUAGE, // after `# language:`: the code
  LINE_MEDIA,    // after an opening doc string delimiter: the media type
};

typedef struct {
  uint8_t dialect;
  uint8_t line;
  uint8_t doc; // 0, '"' or '`': the delimiter of the open doc string
} Scanner;

// Keywords of the .saffron dialect, the same in every language.
enum Terminator { TERM_NONE, TERM_SPACE, TERM_COLON, TERM_CALL };

typedef struct {
  const char *bytes;
  uint8_t length;
  uint8_t position; // bytes matched so far
  uint8_t token;
  uint8_t terminator;
} Candidate;

#define EXTRA_KEYWORDS 3
#define MAX_CANDIDATES (SAFFRON_MAX_KEYWORDS_PER_DIALECT + EXTRA_KEYWORDS)

static const uint8_t KIND_TOKEN[] = {
    [SAFFRON_KW_FEATURE] = FEATURE_KW,
    [SAFFRON_KW_RULE] = RULE_KW,
    [SAFFRON_KW_BACKGROUND] = BACKGROUND_KW,
    [SAFFRON_KW_SCENARIO] = SCENARIO_KW,
    [SAFFRON_KW_SCENARIO_OUTLINE] = SCENARIO_OUTLINE_KW,
    [SAFFRON_KW_EXAMPLES] = EXAMPLES_KW,
    [SAFFRON_KW_GIVEN] = GIVEN_KW,
    [SAFFRON_KW_WHEN] = WHEN_KW,
    [SAFFRON_KW_THEN] = THEN_KW,
    [SAFFRON_KW_AND] = AND_KW,
    [SAFFRON_KW_BUT] = BUT_KW,
    [SAFFRON_KW_STAR] = STAR_KW,
};

static inline bool is_block_token(uint8_t token) {
  return token >= FEATURE_KW && token <= FIXTURE_KW;
}

// Unicode White_Space (what Cucumber trims), without the line feed.
static inline bool is_space(int32_t c) {
  switch (c) {
    case ' ': case '\t': case '\r': case '\v': case '\f':
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

static inline bool at_eol(TSLexer *lexer) {
  return lexer->lookahead == '\n' || lexer->eof(lexer);
}

static inline void advance(TSLexer *lexer) { lexer->advance(lexer, false); }

// Decodes the UTF-8 code point at bytes[*position] and moves past it.
static int32_t decode_utf8(const char *bytes, uint8_t length, uint8_t *position) {
  const uint8_t *s = (const uint8_t *)bytes;
  uint8_t i = *position;
  uint8_t lead = s[i];
  int32_t code;
  uint8_t extra;
  if (lead < 0x80) {
    code = lead;
    extra = 0;
  } else if ((lead & 0xE0) == 0xC0) {
    code = lead & 0x1F;
    extra = 1;
  } else if ((lead & 0xF0) == 0xE0) {
    code = lead & 0x0F;
    extra = 2;
  } else {
    code = lead & 0x07;
    extra = 3;
  }
  i++;
  for (uint8_t k = 0; k < extra && i < length; k++, i++) code = (code << 6) | (s[i] & 0x3F);
  *position = i;
  return code;
}

static const SaffronDialect *find_dialect(const char *code) {
  int low = 0, high = SAFFRON_DIALECT_COUNT - 1;
  while (low <= high) {
    int middle = (low + high) / 2;
    int order = strcmp(SAFFRON_DIALECTS[middle].code, code);
    if (order == 0) return &SAFFRON_DIALECTS[middle];
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return NULL;
}

static unsigned collect_candidates(const Scanner *scanner, Candidate *out, bool blocks_only) {
  unsigned count = 0;
  const SaffronDialect *dialect = &SAFFRON_DIALECTS[scanner->dialect];
  for (uint16_t i = 0; i < dialect->count; i++) {
    const SaffronKeyword *keyword = &SAFFRON_KEYWORDS[dialect->first + i];
    uint8_t token = KIND_TOKEN[keyword->kind];
    if (blocks_only && !is_block_token(token)) continue;
    Candidate *c = &out[count++];
    c->bytes = SAFFRON_KEYWORD_POOL + keyword->offset;
    c->length = keyword->length;
    c->position = 0;
    c->token = token;
    c->terminator = is_block_token(token) ? TERM_COLON : keyword->space ? TERM_SPACE : TERM_NONE;
  }
  static const struct { const char *text; uint8_t token; uint8_t terminator; } EXTRA[EXTRA_KEYWORDS] = {
      {"StepSet", STEP_SET_KW, TERM_COLON},
      {"Fixture", FIXTURE_KW, TERM_COLON},
      {"StepSet", STEP_SET_CALL_KW, TERM_CALL},
  };
  for (unsigned i = 0; i < EXTRA_KEYWORDS; i++) {
    if (blocks_only && !is_block_token(EXTRA[i].token)) continue;
    Candidate *c = &out[count++];
    c->bytes = EXTRA[i].text;
    c->length = (uint8_t)strlen(EXTRA[i].text);
    c->position = 0;
    c->token = EXTRA[i].token;
    c->terminator = EXTRA[i].terminator;
  }
  return count;
}

static bool terminator_ok(uint8_t terminator, TSLexer *lexer) {
  switch (terminator) {
    case TERM_COLON: return lexer->lookahead == ':';
    case TERM_SPACE: return lexer->lookahead == ' ';
    case TERM_CALL: return at_eol(lexer) || is_space(lexer->lookahead);
    default: return true;
  }
}

// Consumes the rest of the line; the token ends after its last non-blank character.
static void consume_rest_trimmed(TSLexer *lexer) {
  while (!at_eol(lexer)) {
    bool blank = is_space(lexer->lookahead);
    advance(lexer);
    if (!blank) lexer->mark_end(lexer);
  }
}

static void skip_rest_of_line(TSLexer *lexer) {
  while (!at_eol(lexer)) advance(lexer);
}

// Looks at the block keyword starting the current line without marking anything.
static int peek_block_keyword(const Scanner *scanner, TSLexer *lexer) {
  Candidate candidates[MAX_CANDIDATES];
  unsigned count = collect_candidates(scanner, candidates, true);
  int best = -1;
  while (count > 0 && !at_eol(lexer)) {
    int32_t c = lexer->lookahead;
    unsigned alive = 0;
    for (unsigned i = 0; i < count; i++) {
      Candidate candidate = candidates[i];
      if (candidate.position < candidate.length &&
          decode_utf8(candidate.bytes, candidate.length, &candidate.position) == c) {
        candidates[alive++] = candidate;
      }
    }
    count = alive;
    if (count == 0) break;
    advance(lexer);
    for (unsigned i = 0; i < count; i++) {
      if (candidates[i].position == candidates[i].length && lexer->lookahead == ':') {
        best = candidates[i].token;
      }
    }
  }
  return best;
}

static void set_line_after_keyword(Scanner *scanner, uint8_t token) {
  if (is_block_token(token)) scanner->line = LINE_BLOCK;
  else if (token == STEP_SET_CALL_KW) scanner->line = LINE_CALL;
  else scanner->line = LINE_STEP;
}

// A line that does not start with '#', '@', '|' or a doc string delimiter: a keyword line
// or a description line.
static bool scan_keyword_line(Scanner *scanner, TSLexer *lexer, const bool *valid, bool error_mode) {
  bool description_possible = valid[DESCRIPTION_LINE] && !error_mode;
  Candidate candidates[MAX_CANDIDATES];
  unsigned count = collect_candidates(scanner, candidates, false);
  if (description_possible) {
    // A keyword that is not allowed here reads as description, as in Cucumber.
    unsigned kept = 0;
    for (unsigned i = 0; i < count; i++) {
      if (valid[candidates[i].token]) candidates[kept++] = candidates[i];
    }
    count = kept;
  }

  bool matched = false;
  int best_token = -1;
  int best_score = -1;
  while (count > 0 && !at_eol(lexer)) {
    int32_t c = lexer->lookahead;
    unsigned alive = 0;
    for (unsigned i = 0; i < count; i++) {
      Candidate candidate = candidates[i];
      if (candidate.position < candidate.length &&
          decode_utf8(candidate.bytes, candidate.length, &candidate.position) == c) {
        candidates[alive++] = candidate;
      }
    }
    count = alive;
    if (count == 0) break;
    advance(lexer);
    // Until a keyword matches, the line may still turn out to be a description.
    if (!matched && !is_space(c)) lexer->mark_end(lexer);
    for (unsigned i = 0; i < count; i++) {
      Candidate *candidate = &candidates[i];
      if (candidate->position != candidate->length) continue;
      if (!terminator_ok(candidate->terminator, lexer)) continue;
      int score = (error_mode || valid[candidate->token]) ? 1 : 0;
      // Longer matches come later and win among equally valid ones.
      if (score >= best_score) {
        best_score = score;
        best_token = candidate->token;
        matched = true;
        lexer->mark_end(lexer);
      }
    }
  }

  if (matched) {
    lexer->result_symbol = (TSSymbol)best_token;
    set_line_after_keyword(scanner, (uint8_t)best_token);
    return true;
  }
  consume_rest_trimmed(lexer);
  lexer->result_symbol = DESCRIPTION_LINE;
  scanner->line = LINE_DONE;
  return true;
}

static bool is_language_code_char(int32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
}

static bool match_word(TSLexer *lexer, const char *word) {
  for (const char *p = word; *p; p++) {
    if (lexer->lookahead != *p) return false;
    advance(lexer);
    lexer->mark_end(lexer);
  }
  return true;
}

// At a '#' that starts a line: `# language: xx` (when a header is allowed) or a comment.
static bool scan_hash_line(Scanner *scanner, TSLexer *lexer, const bool *valid, bool error_mode) {
  advance(lexer);
  lexer->mark_end(lexer);
  if (valid[LANGUAGE_START] && !error_mode) {
    while (!at_eol(lexer) && is_space(lexer->lookahead)) advance(lexer);
    if (match_word(lexer, "language")) {
      while (!at_eol(lexer) && is_space(lexer->lookahead)) advance(lexer);
      if (lexer->lookahead == ':') {
        advance(lexer);
        lexer->mark_end(lexer);
        // The header token ends here; the rest of the line must be one language code.
        while (!at_eol(lexer) && is_space(lexer->lookahead)) advance(lexer);
        unsigned code_length = 0;
        while (is_language_code_char(lexer->lookahead)) {
          advance(lexer);
          code_length++;
        }
        while (!at_eol(lexer) && is_space(lexer->lookahead)) advance(lexer);
        if (code_length > 0 && at_eol(lexer)) {
          lexer->result_symbol = LANGUAGE_START;
          scanner->line = LINE_LANGUAGE;
          return true;
        }
      }
    }
  }
  consume_rest_trimmed(lexer);
  lexer->result_symbol = COMMENT;
  scanner->line = LINE_DONE;
  return true;
}

static void consume_tag(TSLexer *lexer) {
  advance(lexer); // '@'
  while (!at_eol(lexer) && !is_space(lexer->lookahead) && lexer->lookahead != '@') advance(lexer);
  lexer->mark_end(lexer);
}

// The first tag of a tag line. Its token says which block the tags belong to, found by
// looking ahead past tag, comment and blank lines to the next keyword line. That keeps
// the grammar LR(1): tags before `Examples:` continue a scenario, tags before `Rule:`
// close the scenarios of a feature or rule, other tags start a sibling block.
static bool scan_tag_line(Scanner *scanner, TSLexer *lexer) {
  consume_tag(lexer);
  for (;;) {
    skip_rest_of_line(lexer);
    while (!lexer->eof(lexer) && (lexer->lookahead == '\n' || is_space(lexer->lookahead))) {
      advance(lexer);
    }
    if (lexer->eof(lexer)) break;
    if (lexer->lookahead == '#' || lexer->lookahead == '@') continue;
    break;
  }
  int block = lexer->eof(lexer) ? -1 : peek_block_keyword(scanner, lexer);
  lexer->result_symbol = block == EXAMPLES_KW ? TAG_EXAMPLES : block == RULE_KW ? TAG_RULE : TAG_OTHER;
  scanner->line = LINE_TAGS;
  return true;
}

static bool is_row_escape(int32_t c) { return c == '|' || c == '\\' || c == 'n'; }

// Inside a table row. Cells are the text between pipes; `\|`, `\\` and `\n` are escapes;
// whatever follows the last pipe is not a cell (Cucumber drops it) and lexes as trailing.
static bool scan_row(TSLexer *lexer) {
  int32_t c = lexer->lookahead;
  if (c == '|') {
    advance(lexer);
    lexer->mark_end(lexer);
    lexer->result_symbol = PIPE;
    return true;
  }
  TSSymbol candidate = CELL_TEXT;
  bool uncertain = false;
  if (c == '\\') {
    advance(lexer);
    lexer->mark_end(lexer);
    if (is_row_escape(lexer->lookahead)) {
      advance(lexer);
      lexer->mark_end(lexer);
      candidate = ESCAPE_SEQUENCE;
      uncertain = true;
    }
  }
  while (!uncertain) {
    if (lexer->lookahead == '|') {
      lexer->result_symbol = CELL_TEXT;
      return true;
    }
    if (at_eol(lexer)) {
      lexer->result_symbol = TRAILING;
      return true;
    }
    if (lexer->lookahead == '\\') {
      advance(lexer);
      if (is_row_escape(lexer->lookahead)) {
        advance(lexer);
        uncertain = true; // text up to the escape; a cell only if a pipe follows
        break;
      }
      lexer->mark_end(lexer);
      continue;
    }
    bool blank = is_space(lexer->lookahead);
    advance(lexer);
    if (!blank) lexer->mark_end(lexer);
  }
  // Is there an unescaped pipe later on this line?
  while (!at_eol(lexer)) {
    if (lexer->lookahead == '|') {
      lexer->result_symbol = candidate;
      return true;
    }
    if (lexer->lookahead == '\\') {
      advance(lexer);
      if (at_eol(lexer)) break;
    }
    advance(lexer);
  }
  lexer->result_symbol = TRAILING;
  return true;
}

// Step text: plain text chunks and `<placeholder>`s.
static bool scan_step_text(TSLexer *lexer) {
  if (lexer->lookahead == '<') {
    advance(lexer);
    lexer->mark_end(lexer);
    unsigned inside = 0;
    for (;;) {
      int32_t c = lexer->lookahead;
      if (c == '>' && inside > 0) {
        advance(lexer);
        lexer->mark_end(lexer);
        lexer->result_symbol = PLACEHOLDER;
        return true;
      }
      if (c == '<' || c == '>' || at_eol(lexer)) break;
      advance(lexer);
      inside++;
      if (!is_space(c)) lexer->mark_end(lexer);
    }
    lexer->result_symbol = TEXT;
    return true;
  }
  while (!at_eol(lexer) && lexer->lookahead != '<') {
    bool blank = is_space(lexer->lookahead);
    advance(lexer);
    if (!blank) lexer->mark_end(lexer);
  }
  lexer->result_symbol = TEXT;
  return true;
}

// At the start of a line inside an open doc string: the closing delimiter or the content.
static bool scan_doc_body(Scanner *scanner, TSLexer *lexer) {
  int32_t delimiter = scanner->doc;
  unsigned run = 0;
  while (run < 3 && lexer->lookahead == delimiter) {
    advance(lexer);
    run++;
  }
  if (run == 3) {
    lexer->mark_end(lexer);
    lexer->result_symbol = DOC_CLOSE;
    scanner->doc = 0;
    scanner->line = LINE_DONE;
    return true;
  }
  if (run > 0) lexer->mark_end(lexer);
  for (;;) {
    while (!at_eol(lexer)) {
      bool carriage_return = lexer->lookahead == '\r';
      advance(lexer);
      if (!carriage_return) lexer->mark_end(lexer);
    }
    if (lexer->eof(lexer)) break;
    advance(lexer); // '\n'
    while (!at_eol(lexer) && is_space(lexer->lookahead)) advance(lexer);
    run = 0;
    while (run < 3 && lexer->lookahead == delimiter) {
      advance(lexer);
      run++;
    }
    if (run == 3) break;
    if (run > 0) lexer->mark_end(lexer);
  }
  lexer->result_symbol = DOC_CONTENT;
  scanner->line = LINE_DONE;
  return true;
}

static bool scan_line_start(Scanner *scanner, TSLexer *lexer, const bool *valid, bool error_mode) {
  if (scanner->doc) return scan_doc_body(scanner, lexer);

  bool description_possible = valid[DESCRIPTION_LINE] && !error_mode;
  int32_t c = lexer->lookahead;
  switch (c) {
    case '#':
      return scan_hash_line(scanner, lexer, valid, error_mode);
    case '@':
      return scan_tag_line(scanner, lexer);
    case '|':
      advance(lexer);
      lexer->mark_end(lexer);
      if (!valid[ROW_START] && description_possible) break;
      lexer->result_symbol = ROW_START;
      scanner->line = LINE_ROW;
      return true;
    case '"':
    case '`': {
      unsigned run = 0;
      while (run < 3 && lexer->lookahead == c) {
        advance(lexer);
        lexer->mark_end(lexer);
        run++;
      }
      if (run < 3 || (!valid[DOC_OPEN] && description_possible)) break;
      lexer->result_symbol = DOC_OPEN;
      scanner->doc = (uint8_t)c;
      scanner->line = LINE_MEDIA;
      return true;
    }
    default:
      return scan_keyword_line(scanner, lexer, valid, error_mode);
  }
  consume_rest_trimmed(lexer);
  lexer->result_symbol = DESCRIPTION_LINE;
  scanner->line = LINE_DONE;
  return true;
}

static bool scan_language_code(Scanner *scanner, TSLexer *lexer) {
  char code[16];
  unsigned length = 0;
  while (is_language_code_char(lexer->lookahead)) {
    if (length < sizeof code - 1) code[length] = (char)lexer->lookahead;
    length++;
    advance(lexer);
  }
  if (length == 0) return false;
  lexer->mark_end(lexer);
  if (length < sizeof code) {
    code[length] = '\0';
    const SaffronDialect *dialect = find_dialect(code);
    if (dialect) scanner->dialect = (uint8_t)(dialect - SAFFRON_DIALECTS);
  }
  lexer->result_symbol = LANGUAGE;
  scanner->line = LINE_DONE;
  return true;
}

static bool scan(Scanner *scanner, TSLexer *lexer, const bool *valid) {
  bool error_mode = valid[ERROR_SENTINEL];
  bool line_start = scanner->line == LINE_START;
  for (;;) {
    if (lexer->eof(lexer)) return false;
    if (lexer->lookahead == '\n') line_start = true;
    else if (!is_space(lexer->lookahead)) break;
    lexer->advance(lexer, true);
  }
  if (line_start) {
    scanner->line = LINE_START;
    return scan_line_start(scanner, lexer, valid, error_mode);
  }

  switch (scanner->line) {
    case LINE_BLOCK:
      if (lexer->lookahead != ':') return false;
      advance(lexer);
      lexer->mark_end(lexer);
      lexer->result_symbol = COLON;
      scanner->line = LINE_TITLE;
      return true;
    case LINE_TITLE:
      consume_rest_trimmed(lexer);
      lexer->result_symbol = TITLE;
      scanner->line = LINE_DONE;
      return true;
    case LINE_CALL:
      consume_rest_trimmed(lexer);
      lexer->result_symbol = STEP_SET_NAME;
      scanner->line = LINE_DONE;
      return true;
    case LINE_MEDIA:
      consume_rest_trimmed(lexer);
      lexer->result_symbol = MEDIA_TYPE;
      scanner->line = LINE_DONE;
      return true;
    case LINE_STEP:
      return scan_step_text(lexer);
    case LINE_ROW:
      return scan_row(lexer);
    case LINE_TAGS:
      if (lexer->lookahead == '@') {
        consume_tag(lexer);
        lexer->result_symbol = TAG;
        return true;
      }
      if (lexer->lookahead == '#') {
        consume_rest_trimmed(lexer);
        lexer->result_symbol = COMMENT;
        scanner->line = LINE_DONE;
        return true;
      }
      return false;
    case LINE_LANGUAGE:
      return scan_language_code(scanner, lexer);
    default:
      return false;
  }
}

void *tree_sitter_saffron_external_scanner_create(void) {
  Scanner *scanner = calloc(1, sizeof(Scanner));
  if (scanner) scanner->dialect = SAFFRON_DEFAULT_DIALECT;
  return scanner;
}

void tree_sitter_saffron_external_scanner_destroy(void *payload) { free(payload); }

unsigned tree_sitter_saffron_external_scanner_serialize(void *payload, char *buffer) {
  Scanner *scanner = (Scanner *)payload;
  buffer[0] = (char)scanner->dialect;
  buffer[1] = (char)scanner->line;
  buffer[2] = (char)scanner->doc;
  return 3;
}

void tree_sitter_saffron_external_scanner_deserialize(void *payload, const char *buffer, unsigned length) {
  Scanner *scanner = (Scanner *)payload;
  scanner->dialect = SAFFRON_DEFAULT_DIALECT;
  scanner->line = LINE_START;
  scanner->doc = 0;
  if (length >= 3) {
    scanner->dialect = (uint8_t)buffer[0];
    scanner->line = (uint8_t)buffer[1];
    scanner->doc = (uint8_t)buffer[2];
    if (scanner->dialect >= SAFFRON_DIALECT_COUNT) scanner->dialect = SAFFRON_DEFAULT_DIALECT;
  }
}

bool tree_sitter_saffron_external_scanner_scan(void *payload, TSLexer *lexer, const bool *valid_symbols) {
  return scan((Scanner *)payload, lexer, valid_symbols);
}
