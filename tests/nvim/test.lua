-- The checks of tests/nvim/run.sh, run inside headless Neovim by tests/nvim/init.lua.
-- Only functions Neovim 0.7.2 has are used (no vim.fs, no vim.lsp.get_clients there), except in
-- the tree-sitter check, which is skipped before Neovim 0.11.

local repo = os.getenv('SAFFRON_REPO')
local project = os.getenv('SAFFRON_PROJECT')
local bin = os.getenv('SAFFRON_BIN')
local timeout = tonumber(os.getenv('SAFFRON_NVIM_TEST_TIMEOUT_MS') or '') or 20000
local saffron = require('saffron')

local passed, failed, skipped = 0, 0, 0

local function say(line)
  io.stdout:write(line, '\n')
  io.stdout:flush()
end

local SKIP = {}

local function check(name, body)
  local ok, problem = pcall(body)
  if not ok and type(problem) == 'table' and problem[1] == SKIP then
    skipped = skipped + 1
    say('skip   ' .. name .. ': ' .. problem[2])
    return false
  end
  if ok then
    passed = passed + 1
    say('ok     ' .. name)
  else
    failed = failed + 1
    say('FAILED ' .. name)
    for line in tostring(problem):gmatch('[^\n]+') do
      say('       ' .. line)
    end
  end
  return ok
end

local function read(path)
  local handle = assert(io.open(path, 'rb'), 'cannot read ' .. path)
  local text = handle:read('*a')
  handle:close()
  return text
end

local function lines_of(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

local function line_index(bufnr, text)
  for index, line in ipairs(lines_of(bufnr)) do
    if line == text then
      return index - 1
    end
  end
  error(('no line %q in the buffer'):format(text))
end

local function saffron_client(bufnr)
  for _, client in ipairs(saffron.clients(bufnr)) do
    if client.initialized ~= false then
      return client
    end
  end
  return nil
end

local function server_exit_message()
  local exit = saffron.last_exit
  if not exit then
    return nil
  end
  return ('`%s lsp` exited with code %s%s'):format(
    bin,
    tostring(exit.code),
    exit.signal and exit.signal ~= 0 and (', signal ' .. exit.signal) or ''
  )
end

local function log_tail()
  local ok, text = pcall(read, vim.lsp.get_log_path())
  if not ok or text == '' then
    return '(the LSP log is empty)'
  end
  local lines = vim.split(text, '\n', true)
  local first = math.max(1, #lines - 15)
  return 'last lines of the LSP log:\n' .. table.concat(vim.list_slice(lines, first), '\n')
end

--- "recorded" as a status, not as the end of "unrecorded".
local function says_recorded(text)
  if type(text) ~= 'string' then
    return false
  end
  local start = 1
  while true do
    local at = text:find('recorded', start, true)
    if not at then
      return false
    end
    if at < 3 or text:sub(at - 2, at - 1):lower() ~= 'un' then
      return true
    end
    start = at + 1
  end
end

-- -------------------------------------------------------------------------------------------

check('the plugin ships the grammar\'s queries unchanged', function()
  for _, name in ipairs({ 'highlights.scm', 'folds.scm', 'injections.scm', 'locals.scm' }) do
    local shipped = read(repo .. '/editors/nvim/queries/saffron/' .. name)
    local grammar = read(repo .. '/grammars/tree-sitter-saffron/queries/' .. name)
    assert(shipped == grammar, ('editors/nvim/queries/saffron/%s differs from the grammar\'s; copy it again'):format(name))
  end
end)

local orders = project .. '/features/orders.saffron'
vim.cmd('edit ' .. vim.fn.fnameescape(orders))
local bufnr = vim.api.nvim_get_current_buf()

check('*.saffron opens as filetype saffron, with the Vim syntax fallback', function()
  assert(vim.bo[bufnr].filetype == 'saffron', 'filetype is ' .. vim.bo[bufnr].filetype)
  assert(vim.b.current_syntax == 'saffron', 'syntax is ' .. tostring(vim.b.current_syntax))
  local invocation = line_index(bufnr, '    StepSet signed in as the demo user') + 1
  local group = vim.fn.synIDattr(vim.fn.synID(invocation, 5, 1), 'name')
  assert(group == 'saffronInvocation', 'StepSet of an invocation is ' .. group)
  local scenario = line_index(bufnr, '  Scenario: Search orders by customer') + 1
  group = vim.fn.synIDattr(vim.fn.synID(scenario, 3, 1), 'name')
  assert(group == 'cucumberScenario', 'Scenario: is ' .. group)
  vim.cmd('edit ' .. vim.fn.fnameescape(project .. '/features/shared.steps.saffron'))
  local shared = vim.api.nvim_get_current_buf()
  local definition = line_index(shared, '  StepSet: signed in as the demo user') + 1
  group = vim.fn.synIDattr(vim.fn.synID(definition, 3, 1), 'name')
  vim.cmd('buffer ' .. bufnr)
  assert(group == 'saffronBlock', 'StepSet: of a definition is ' .. group)
end)

local attached = check('saffron lsp starts and attaches to features/orders.saffron', function()
  assert(vim.fn.executable(bin) == 1, bin .. ' is not an executable file (build it: cargo build -p saffron-cli)')
  local ok = vim.wait(timeout, function()
    return saffron_client(bufnr) ~= nil or saffron.last_exit ~= nil
  end, 50)
  if saffron_client(bufnr) then
    assert(vim.bo[bufnr].omnifunc == 'v:lua.vim.lsp.omnifunc', 'omnifunc is ' .. vim.bo[bufnr].omnifunc)
    return
  end
  error(table.concat({
    ok and server_exit_message() or ('no saffron client attached within ' .. timeout .. ' ms'),
    log_tail(),
  }, '\n'))
end)

if attached then
  check('*.feature (filetype cucumber) gets the server too, as the language id gherkin', function()
    vim.cmd('edit ' .. vim.fn.fnameescape(project .. '/features/sign_in.feature'))
    local feature = vim.api.nvim_get_current_buf()
    vim.cmd('buffer ' .. bufnr)
    assert(vim.bo[feature].filetype == 'cucumber', 'filetype is ' .. vim.bo[feature].filetype)
    local ok = vim.wait(timeout, function()
      return saffron_client(feature) ~= nil
    end, 50)
    assert(ok, 'no saffron client attached to sign_in.feature within ' .. timeout .. ' ms')
    local client = saffron_client(feature)
    local language = client.config.get_language_id(feature, 'cucumber')
    assert(language == 'gherkin', 'the language id of a cucumber buffer is ' .. tostring(language))
  end)
end

if attached then
  check('a near-duplicate warning names the existing wording "I see the orders page"', function()
    local line = line_index(bufnr, '    Then I should see the orders page')
    local found
    vim.wait(timeout, function()
      for _, diagnostic in ipairs(vim.diagnostic.get(bufnr)) do
        if
          diagnostic.lnum == line
          and diagnostic.severity == vim.diagnostic.severity.WARN
          and diagnostic.message:find('I see the orders page', 1, true)
        then
          found = diagnostic
          return true
        end
      end
      return false
    end, 50)
    if not found then
      local seen = {}
      for _, diagnostic in ipairs(vim.diagnostic.get(bufnr)) do
        table.insert(seen, ('line %d, severity %d: %s'):format(diagnostic.lnum + 1, diagnostic.severity, diagnostic.message))
      end
      error(('no warning on line %d within %d ms; diagnostics:\n%s'):format(
        line + 1,
        timeout,
        #seen > 0 and table.concat(seen, '\n') or '(none)'
      ))
    end
  end)

  check(':SaffronRun takes the scenario under the cursor from the server\'s code lenses', function()
    local scenario = line_index(bufnr, '  Scenario: Search orders by customer')
    vim.api.nvim_win_set_cursor(0, { scenario + 2, 4 }) -- on "When I search orders for ..."
    local target = saffron.scenario_at_cursor()
    assert(target, 'no scenario found at the cursor')
    local expected = ('features/orders.saffron:%d'):format(scenario + 1)
    assert(target.argument == expected, ('the run argument is %q, expected %q'):format(target.argument, expected))
    assert(
      vim.fn.resolve(target.root) == vim.fn.resolve(project),
      ('the run would start in %s, not the project root %s'):format(target.root, project)
    )
  end)

  check('completion after "    When I se" offers a recorded step, badged as recorded', function()
    -- run.sh starts Neovim in the copy of the project, whose vocabulary `saffron steps` lists.
    local output = vim.fn.system({ bin, 'steps', '--format', 'json' }, '')
    assert(vim.v.shell_error == 0, 'saffron steps --format json failed: ' .. output)
    local recorded = {}
    local ok, steps = pcall(vim.json.decode, output)
    assert(ok and type(steps) == 'table', 'saffron steps --format json did not print JSON')
    for _, step in ipairs(steps) do
      if step.status == 'recorded' and step.text:sub(1, 4) == 'I se' then
        recorded[step.text] = true
      end
    end
    assert(recorded['I see the orders page'], '"I see the orders page" is not a recorded step of the example project')

    local after = line_index(bufnr, '    And every order in the table is for "Ada Lovelace"')
    local typed = '    When I se'
    vim.api.nvim_buf_set_lines(bufnr, after + 1, after + 1, false, { typed })
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      position = { line = after + 1, character = #typed },
      context = { triggerKind = 1 },
    }
    local labels, match = {}, nil
    vim.wait(timeout, function()
      local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/completion', params, 5000) or {}
      labels = {}
      for _, response in pairs(responses) do
        local result = response.result
        local items = type(result) == 'table' and (result.items or result) or {}
        for _, item in ipairs(items) do
          local details = item.labelDetails or {}
          local badge = table.concat({ details.detail or '', details.description or '', item.detail or '' }, ' ')
          table.insert(labels, ('%s [%s]'):format(item.label, badge))
          if recorded[item.label] and says_recorded(badge) then
            match = item
          end
        end
      end
      return match ~= nil
    end, 200)
    if not match then
      error(('no recorded step among the %d items:\n%s'):format(#labels, table.concat(labels, '\n')))
    end
  end)

  -- "I see the message" is written with two values: completion offers it as one item, which
  -- must still write a step of the project as Neovim inserts it (Neovim 0.7 has no snippet
  -- engine: its omnifunc writes a snippet's default values), and, for a client with snippet
  -- support (nvim-cmp and a snippet plugin declare it), a tab stop on the value.
  local written = {
    ['I see the message "Order #1004 deleted"'] = true,
    ['I see the message "Order #1003 refunded"'] = true,
  }
  local function grouped_item(client, bufnr, line, typed)
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      position = { line = line, character = #typed },
      context = { triggerKind = 1 },
    }
    local found, labels = nil, {}
    vim.wait(timeout, function()
      local response = client.request_sync('textDocument/completion', params, 5000, bufnr) or {}
      local result = response.result
      local items = type(result) == 'table' and (result.items or result) or {}
      labels = {}
      for _, item in ipairs(items) do
        table.insert(labels, item.label)
        if item.label:sub(1, #'I see the message') == 'I see the message' then
          found = { item = item, result = result }
        end
      end
      return found ~= nil
    end, 200)
    assert(found, ('no "I see the message" item among:\n%s'):format(table.concat(labels, '\n')))
    return found.item, found.result
  end
  -- The line as Neovim's omnifunc writes it: the keyword, then the item's word.
  local function inserted_word(item, result, typed_text)
    local complete_items = vim.lsp.util.text_document_completion_list_to_complete_items(result, typed_text)
    for _, complete_item in ipairs(complete_items) do
      if complete_item.abbr == item.label then
        return complete_item.word
      end
    end
    error('Neovim made no complete item of ' .. item.label)
  end

  check('a grouped item (a step written with several values) inserts a step the project writes', function()
    local above = line_index(bufnr, '    Then I see the message "Order #1003 refunded"')
    local typed = '    Then I see the mes'
    vim.api.nvim_buf_set_lines(bufnr, above + 1, above + 1, false, { typed })
    local ok, problem = pcall(function()
      local item, result = grouped_item(saffron_client(bufnr), bufnr, above + 1, typed)
      local detail = item.detail or ''
      assert(detail:find('2 variants', 1, true), ('the item\'s detail does not count its variants: %q'):format(detail))
      local word = inserted_word(item, result, 'I see the mes')
      assert(written[word], ('Neovim would write %q, which the project never writes'):format(word))
    end)
    vim.api.nvim_buf_set_lines(bufnr, above + 1, above + 2, false, {})
    assert(ok, problem)
  end)

  check('with snippet support, a grouped item has a tab stop on its value, defaulting to a written one', function()
    local capabilities = vim.lsp.protocol.make_client_capabilities()
    capabilities.textDocument.completion.completionItem.snippetSupport = true
    local id = vim.lsp.start_client({
      name = 'saffron-snippets',
      cmd = { bin, 'lsp' },
      root_dir = project,
      capabilities = capabilities,
    })
    assert(id, 'a second saffron lsp did not start')
    local above = line_index(bufnr, '    Then I see the message "Order #1003 refunded"')
    local typed = '    Then I see the mes'
    vim.api.nvim_buf_set_lines(bufnr, above + 1, above + 1, false, { typed })
    local ok, problem = pcall(function()
      vim.lsp.buf_attach_client(bufnr, id)
      local client
      assert(vim.wait(timeout, function()
        client = vim.lsp.get_client_by_id(id)
        return client ~= nil and client.initialized ~= false and client.server_capabilities ~= nil
      end, 50), 'the second saffron lsp did not initialize')
      local item, result = grouped_item(client, bufnr, above + 1, typed)
      local body = (item.textEdit and item.textEdit.newText) or item.textEditText or item.insertText
      local format = item.insertTextFormat or (result.itemDefaults or {}).insertTextFormat
      assert(format == 2, ('the item is not a snippet (insertTextFormat %s): %s'):format(tostring(format), vim.inspect(item)))
      assert(type(body) == 'string', 'the item has no body: ' .. vim.inspect(item))
      -- Read as snippet plugins read it: Neovim's own LSP snippet parser.
      local snippet = require('vim.lsp._snippet')
      local parsed = snippet.parse(body)
      local placeholders = {}
      for _, node in ipairs(parsed.children) do
        if node.type == snippet.NodeType.PLACEHOLDER then
          table.insert(placeholders, node)
        end
      end
      assert(#placeholders == 1, ('%d tab stops with a default in %q, expected 1'):format(#placeholders, body))
      assert(placeholders[1].tabstop == 1, ('the value is tab stop %s in %q'):format(tostring(placeholders[1].tabstop), body))
      local default_value = tostring(placeholders[1])
      assert(
        default_value == 'Order #1004 deleted' or default_value == 'Order #1003 refunded',
        ('the tab stop defaults to %q, no value the project writes'):format(default_value)
      )
      assert(body:sub(1, #'I see the message "') == 'I see the message "', 'the snippet body is ' .. body)
      local word = inserted_word(item, result, 'I see the mes')
      assert(written[word], ('Neovim would write %q, which the project never writes'):format(word))
    end)
    vim.api.nvim_buf_set_lines(bufnr, above + 1, above + 2, false, {})
    local client = vim.lsp.get_client_by_id(id)
    if client then
      client.stop()
    end
    assert(ok, problem)
  end)
end

if attached then
  check(':SaffronRestart stops saffron lsp and attaches a new one', function()
    local before = saffron_client(bufnr)
    assert(before, 'no saffron client before the restart')
    saffron.restart()
    local restarted = vim.wait(timeout, function()
      local client = saffron_client(bufnr)
      return client ~= nil and client.id ~= before.id
    end, 50)
    assert(restarted, server_exit_message() or ('no new saffron client attached within ' .. timeout .. ' ms'))
    assert(vim.lsp.get_client_by_id(before.id) == nil, 'the old client is still running')
  end)
end

check('saffron runs in a terminal split, from the project root', function()
  local cwd = vim.fn.getcwd()
  vim.cmd('cd /')
  local window = vim.api.nvim_get_current_win()
  local job = saffron.run_in_terminal(project, { 'check', 'features' })
  vim.cmd('cd ' .. vim.fn.fnameescape(cwd))
  assert(job and job > 0, 'no terminal job started')
  local terminal = vim.api.nvim_get_current_buf()
  assert(vim.bo[terminal].buftype == 'terminal', 'the new window holds a ' .. vim.bo[terminal].buftype .. ' buffer')
  local output = ''
  local done = vim.wait(timeout, function()
    output = table.concat(vim.api.nvim_buf_get_lines(terminal, 0, -1, false), '\n')
    return output:find('checked %d+ file') ~= nil
  end, 50)
  vim.cmd('bwipeout! ' .. terminal)
  vim.api.nvim_set_current_win(window)
  assert(done, '`saffron check features` did not report in the terminal:\n' .. output)
end)

check(':SaffronReview diffs the committed recording against the proposed one, then offers accept or reject', function()
  -- A proposal as the runner files it (docs/recording-format.md): the proposed recording sits,
  -- pretty-printed, inside the proposal; here one locator tier of the committed one changed.
  local cache_path = '.saffron/cache/orders/export-the-orders.json'
  local committed = read(project .. '/' .. cache_path):gsub('\n$', '')
  local recording = vim.split(committed, '\n', true)
  for index, line in ipairs(recording) do
    if line:find('"tier": "role"', 1, true) then
      recording[index] = line:gsub('"tier": "role"', '"tier": "label"')
      break
    end
  end
  local text = {
    '{',
    '  "version": 1,',
    '  "scenario": { "feature": "features/orders.saffron", "name": "Export the orders", "cachePath": "' .. cache_path .. '" },',
    '  "recording": ' .. recording[1],
  }
  for index = 2, #recording do
    table.insert(text, '  ' .. recording[index] .. (index == #recording and ',' or ''))
  end
  table.insert(text, '  "featureEdits": [ { "file": "features/orders.saffron", "line": 31, "before": "    When I export the orders", "after": "    When I export the orders {now}" } ],')
  table.insert(text, '  "narrative": "The \\"Export\\" link became a button }]."')
  table.insert(text, '}')
  local relative = '.saffron/proposals/orders/export-the-orders.json'
  vim.fn.mkdir(project .. '/.saffron/proposals/orders', 'p')
  local handle = assert(io.open(project .. '/' .. relative, 'wb'))
  handle:write(table.concat(text, '\n'), '\n')
  handle:close()

  local select, run = vim.ui.select, saffron.run_in_terminal
  local offered, ran
  vim.ui.select = function(choices, options, on_choice)
    offered = { choices = choices, prompt = options.prompt }
    on_choice('Reject')
  end
  saffron.run_in_terminal = function(root, args)
    ran = { root = root, args = args }
  end
  local ok, problem = pcall(function()
    saffron.review(project, relative)
    vim.wait(timeout, function()
      return ran ~= nil
    end, 20)
    local windows = vim.api.nvim_tabpage_list_wins(0)
    assert(#windows == 2, 'the review tab has ' .. #windows .. ' windows')
    local left, right = vim.api.nvim_win_get_buf(windows[1]), vim.api.nvim_win_get_buf(windows[2])
    assert(vim.wo[windows[1]].diff and vim.wo[windows[2]].diff, 'the two windows are not in diff mode')
    assert(
      vim.fn.resolve(vim.api.nvim_buf_get_name(left)) == vim.fn.resolve(project .. '/' .. cache_path),
      'the left side is ' .. vim.api.nvim_buf_get_name(left)
    )
    local shown = vim.api.nvim_buf_get_lines(right, 0, -1, false)
    assert(
      table.concat(shown, '\n') == table.concat(recording, '\n'),
      'the right side is not the proposed recording as the cache writes it:\n' .. table.concat(shown, '\n')
    )
    assert(offered, 'no accept/reject choice was offered')
    local choices = table.concat(offered.choices, ' | ')
    for _, expected in ipairs({ 'Accept', 'Accept with feature edits', 'Reject' }) do
      assert(vim.tbl_contains(offered.choices, expected), ('%q is not among the choices: %s'):format(expected, choices))
    end
    assert(offered.prompt:find('Export the orders', 1, true), 'the prompt does not name the scenario: ' .. offered.prompt)
    assert(ran.args[1] == 'reject' and ran.args[2] == relative, 'Reject ran saffron ' .. table.concat(ran.args, ' '))
    assert(vim.fn.resolve(ran.root) == vim.fn.resolve(project), 'Reject ran in ' .. ran.root)
  end)
  vim.ui.select, saffron.run_in_terminal = select, run
  vim.cmd('silent! tabclose!')
  os.remove(project .. '/' .. relative)
  assert(ok, problem)
end)

-- Accept and Reject end to end with the real binary, on a real proposal: tests/review/project,
-- generated and kept fresh by crates/saffron-cli/tests/review.rs.
local review_relative = '.saffron/proposals/review/buy.json'

--- A fresh copy of the review project; `edit` may change it before the review.
local function review_project()
  local root = vim.fn.tempname()
  local output = vim.fn.system({ 'cp', '-R', repo .. '/tests/review/project', root })
  assert(vim.v.shell_error == 0, 'cannot copy the review project: ' .. output)
  return root
end

--- Reviews the proposal of `root`, answers `choice`, and returns the terminal's text once it
--- shows `expected` (or fails after the deadline).
local function review_and_answer(root, choice, expected)
  local select = vim.ui.select
  local window = vim.api.nvim_get_current_win()
  vim.ui.select = function(_, _, on_choice)
    on_choice(choice)
  end
  local output, terminal = '', nil
  local ok, problem = pcall(function()
    saffron.review(root, review_relative)
    local shown = vim.wait(timeout, function()
      for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == 'terminal' then
          -- The terminal wraps long lines: they are read joined back.
          local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '')
          if text:find(expected, 1, true) then
            terminal, output = bufnr, text
            return true
          end
        end
      end
      return false
    end, 50)
    assert(shown, ('the terminal did not show %q after %s'):format(expected, choice))
  end)
  vim.ui.select = select
  if terminal then
    vim.cmd('bwipeout! ' .. terminal)
  end
  vim.cmd('silent! tabclose!')
  if vim.api.nvim_win_is_valid(window) then
    vim.api.nvim_set_current_win(window)
  end
  assert(ok, problem)
  return output
end

check('Accept runs saffron accept: the recording on disk becomes the proposal\'s and the proposal is gone', function()
  local root = review_project()
  local proposal = vim.json.decode(read(root .. '/' .. review_relative))
  review_and_answer(root, 'Accept', 'Accepted ' .. review_relative)
  local written = vim.json.decode(read(root .. '/.saffron/cache/review/buy.json'))
  assert(vim.deep_equal(written, proposal.recording), 'the recording on disk is not the proposal\'s')
  assert(vim.fn.filereadable(root .. '/' .. review_relative) == 0, 'the proposal is still there')
  vim.fn.delete(root, 'rf')
end)

check('Reject runs saffron reject: the proposal is gone and the recording unchanged', function()
  local root = review_project()
  local committed = read(root .. '/.saffron/cache/review/buy.json')
  review_and_answer(root, 'Reject', 'Rejected ' .. review_relative)
  assert(read(root .. '/.saffron/cache/review/buy.json') == committed, 'the recording changed')
  assert(vim.fn.filereadable(root .. '/' .. review_relative) == 0, 'the proposal is still there')
  vim.fn.delete(root, 'rf')
end)

check('Accept on a stale proposal shows the refusal and changes nothing', function()
  local root = review_project()
  local feature = root .. '/features/review.feature'
  local edited = read(feature):gsub('When I buy', 'When I buy it')
  local handle = assert(io.open(feature, 'wb'))
  handle:write(edited)
  handle:close()
  local committed = read(root .. '/.saffron/cache/review/buy.json')
  local output = review_and_answer(root, 'Accept', 'refused: the proposal is stale')
  assert(output:find('steps changed', 1, true), 'the refusal gives no reason:\n' .. output)
  assert(read(root .. '/.saffron/cache/review/buy.json') == committed, 'the recording changed')
  assert(vim.fn.filereadable(root .. '/' .. review_relative) == 1, 'the proposal is gone')
  vim.fn.delete(root, 'rf')
end)

check('tree-sitter: :SaffronBuildParser builds the grammar and Saffron buffers highlight with it', function()
  if (vim.treesitter.language_version or 0) < 15 then
    error({ SKIP, ('Neovim %s loads parsers up to ABI %s; the grammar is ABI 15 (Neovim 0.11+)'):format(
      tostring(vim.version and vim.version().minor and ('0.' .. vim.version().minor) or '?'),
      tostring(vim.treesitter.language_version)
    ) })
  end
  if vim.fn.executable(vim.env.CC or 'cc') ~= 1 then
    error({ SKIP, 'no C compiler' })
  end
  -- run.sh points XDG_DATA_HOME into the temporary folder, so this never touches the machine.
  assert(saffron.build_parser(), 'building the parser failed')
  -- A fresh buffer, so its FileType event starts tree-sitter with the parser just built.
  local path = project .. '/features/shared.steps.saffron'
  if vim.fn.bufnr(path) ~= -1 then
    vim.cmd('bwipeout! ' .. vim.fn.bufnr(path))
  end
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local shared = vim.api.nvim_get_current_buf()
  local active = vim.treesitter.highlighter.active[shared] ~= nil
  local captures = {}
  local query = vim.treesitter.query.get('saffron', 'highlights')
  local tree = vim.treesitter.get_parser(shared, 'saffron'):parse()[1]
  for id, node in query:iter_captures(tree:root(), shared) do
    captures[query.captures[id] .. '=' .. vim.treesitter.get_node_text(node, shared)] = true
  end
  for _, name in ipairs({ 'folds', 'injections', 'locals' }) do
    assert(vim.treesitter.query.get('saffron', name), 'queries/saffron/' .. name .. '.scm does not load')
  end
  vim.cmd('bwipeout! ' .. shared)
  assert(active, 'tree-sitter highlighting did not start in a saffron buffer')
  assert(not tree:root():has_error(), 'shared.steps.saffron parses with errors')
  assert(captures['keyword=StepSet'], 'StepSet is not captured as @keyword')
  assert(captures['function=signed in as the demo user'], 'the StepSet name is not captured as @function')
  assert(captures['keyword=Given'], 'Given is not captured as @keyword')
end)

-- :SaffronProposals and :SaffronRuns: the pickers list what the CLI's JSON says, and act
-- through the CLI.
check(':SaffronProposals lists the real pending proposal from saffron proposals --format json and reviews it', function()
  local root = review_project()
  local previous = vim.fn.getcwd()
  local select, review = vim.ui.select, saffron.review
  local listed, reviewed = nil, nil
  vim.ui.select = function(items, options, on_choice)
    listed = vim.tbl_map(options.format_item, items)
    on_choice(items[1])
  end
  saffron.review = function(at, relative)
    reviewed = { at, relative }
  end
  vim.cmd('enew')
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  local ok, problem = pcall(saffron.proposals_command)
  vim.ui.select, saffron.review = select, review
  vim.cmd('cd ' .. vim.fn.fnameescape(previous))
  assert(ok, problem)
  assert(listed and #listed == 1, 'one proposal listed: ' .. vim.inspect(listed))
  assert(listed[1]:find('review.feature', 1, true), 'the entry names its feature: ' .. listed[1])
  assert(reviewed and reviewed[2] == review_relative, 'the chosen proposal is reviewed: ' .. vim.inspect(reviewed))
  vim.fn.delete(root, 'rf')
end)

check(':SaffronRuns lists the runs, and Import shows what saffron import --run did', function()
  local folder = vim.fn.tempname()
  vim.fn.mkdir(folder, 'p')
  local stand_in = folder .. '/saffron'
  local script = {
    '#!/bin/sh',
    'printf "%s\\n" "$*" >> "' .. folder .. '/args"',
    'if [ "$1 $2" = "runs --json" ]; then',
    [[  printf '%s' '{"branch":"main","runs":[{"id":"4242","name":"e2e","number":17,"status":"completed","conclusion":"failure","event":"push","commit":"abcdef123","link":"https://github.example/r/4242","pending":[".saffron/proposals/a/b.json"]}]}']],
    '  exit 0',
    'fi',
    'if [ "$1 $2 $3 $4" = "import --run 4242 --json" ]; then',
    [[  printf '%s' '{"bundles":[],"warnings":[],"proposals":[{"path":".saffron/proposals/a/b.json","outcome":"stale","reasons":["the steps changed"]}],"changed":false}']],
    '  exit 0',
    'fi',
    'exit 2',
  }
  vim.fn.writefile(script, stand_in)
  vim.fn.setfperm(stand_in, 'rwxr-xr-x')
  local bin_before = saffron.options.bin
  local select, notify = vim.ui.select, vim.notify
  local listed, told = nil, {}
  saffron.options.bin = stand_in
  vim.ui.select = function(items, options, on_choice)
    if options.format_item then
      listed = vim.tbl_map(options.format_item, items)
      on_choice(items[1])
    else
      on_choice('Import its heal bundles')
    end
  end
  vim.notify = function(message)
    table.insert(told, message)
  end
  local ok, problem = pcall(saffron.runs_command)
  -- The plugin says what the import did on the next tick.
  vim.wait(timeout, function()
    return #told > 0
  end, 20)
  saffron.options.bin, vim.ui.select, vim.notify = bin_before, select, notify
  assert(ok, problem)
  assert(listed and listed[1] == '4242 e2e #17 · failure · abcdef1 · 1 pending', vim.inspect(listed))
  local shown = table.concat(told, '\n')
  assert(shown:find('stale: .saffron/proposals/a/b.json (the steps changed)', 1, true), shown)
  assert(shown:find('nothing changed', 1, true), shown)
  assert(read(folder .. '/args') == 'runs --json\nimport --run 4242 --json\n', read(folder .. '/args'))
  local entries, message = saffron.run_entries('{"problem":{"kind":"no-gh","message":"gh is not on PATH"},"error":"x"}')
  assert(entries == nil and message == 'gh is not on PATH', 'a problem is shown as the CLI said it')
  vim.fn.delete(folder, 'rf')
end)

-- -------------------------------------------------------------------------------------------

for _, client in ipairs(saffron.clients()) do
  vim.lsp.stop_client(client.id)
end
vim.wait(2000, function()
  return #saffron.clients() == 0
end, 20)

if skipped > 0 then
  say(('%d passed, %d failed, %d skipped'):format(passed, failed, skipped))
else
  say(('%d passed, %d failed'):format(passed, failed))
end
if failed > 0 then
  vim.cmd('cquit 1')
else
  vim.cmd('qall!')
end
