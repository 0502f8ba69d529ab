-- Saffron for Neovim: `saffron lsp` for .saffron and .feature buffers, the commands its code
-- lenses name (run a scenario or a feature, review a proposal), and the tree-sitter grammar.
--
-- Works on Neovim 0.7.2 (Debian 12's package) and newer, using the newest LSP API the running
-- Neovim has:
--   0.11+     vim.lsp.config() + vim.lsp.enable()
--   0.8-0.10  vim.lsp.start() from a FileType autocommand
--   0.7       vim.lsp.start_client() + vim.lsp.buf_attach_client()
-- Only functions that 0.7.2 has are called unguarded.

local M = {}

local uv = vim.uv or vim.loop

--- The settings in effect after setup().
M.options = nil

--- How the last `saffron lsp` process ended: { code = n, signal = n, client_id = n } or nil.
M.last_exit = nil

local defaults = {
  -- The language server command. Its first word is also the binary the run, accept and reject
  -- commands use, unless `bin` says otherwise.
  cmd = { 'saffron', 'lsp' },
  bin = nil,
  -- Searched upwards from the file, in this order: the first marker found anywhere above wins.
  root_markers = { 'saffron.toml', '.saffron', '.git' },
  -- `saffron` (this plugin's ftdetect: *.saffron) and `cucumber` (Neovim's own filetype for
  -- *.feature). The server gets the language ids `saffron` and `gherkin`.
  filetypes = { 'saffron', 'cucumber' },
  -- Show the server's code lenses (run / review) and refresh them as you edit.
  codelens = true,
  -- Register the grammar with nvim-treesitter when it is installed, and start tree-sitter
  -- highlighting in Saffron buffers when a `saffron` parser is installed.
  treesitter = true,
  -- Passed through to the client.
  on_attach = nil,
  capabilities = nil,
  settings = nil,
  init_options = nil,
  flags = nil,
  -- 'config' (0.11+), 'start' (0.8+) or 'start_client' (0.7+); nil picks the newest available.
  api = nil,
}

local function notify(message, level)
  vim.schedule(function()
    vim.notify('saffron: ' .. message, level or vim.log.levels.INFO)
  end)
end

local function has(feature)
  return vim.fn.has(feature) == 1
end

-- ------------------------------------------------------------------------------------------
-- Paths and roots

local function is_absolute(path)
  return path:sub(1, 1) == '/' or path:match('^%a:[/\\]') ~= nil
end

local function join(directory, relative)
  return directory .. '/' .. relative
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

local function parent(directory)
  local up = vim.fn.fnamemodify(directory, ':h')
  if up == directory then
    return nil
  end
  return up
end

local function buffer_directory(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return nil
  end
  return vim.fn.fnamemodify(name, ':p:h')
end

--- The folder holding the first of `markers` found at or above `directory`, markers tried in
--- order (as vim.fs.root() does on Neovim 0.10+).
function M.find_root(directory, markers)
  if directory == nil then
    return nil
  end
  for _, marker in ipairs(markers) do
    local current = directory
    while current do
      if exists(join(current, marker)) then
        return current
      end
      current = parent(current)
    end
  end
  return nil
end

--- `file` relative to `root`, with forward slashes, or nil when it is not under `root`.
function M.relative_to(root, file)
  local prefix = root:gsub('[/\\]$', '') .. '/'
  local normalized = file:gsub('\\', '/')
  prefix = prefix:gsub('\\', '/')
  if normalized:sub(1, #prefix) == prefix then
    return normalized:sub(#prefix + 1)
  end
  return nil
end

--- Refuses project-relative paths that are absolute or climb out of the root.
local function inside_root(root, relative)
  if relative == nil or relative == '' or is_absolute(relative) then
    return nil
  end
  for part in relative:gmatch('[^/\\]+') do
    if part == '..' then
      return nil
    end
  end
  return join(root, relative)
end

local function client_root(client_id)
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  return client and (client.config.root_dir or client.root_dir) or nil
end

--- The project root under which `relative` (a path from a code lens) exists: lens arguments are
--- relative to the project root the server chose, which may be nearer than `.git`.
local function root_for(relative, bufnr, client_id)
  local directory = bufnr and buffer_directory(bufnr) or nil
  local candidates = {
    M.find_root(directory, { 'saffron.toml', '.saffron' }),
    client_root(client_id),
    M.find_root(directory, M.options.root_markers),
    vim.fn.getcwd(),
  }
  local first
  for index = 1, 4 do
    local root = candidates[index]
    if root then
      first = first or root
      local path = inside_root(root, relative)
      if path and exists(path) then
        return root
      end
    end
  end
  return first
end

-- ------------------------------------------------------------------------------------------
-- Running saffron

local function binary()
  return M.options.bin or M.options.cmd[1]
end

--- Runs `saffron <args>` in a terminal split at the bottom, from `root`.
function M.run_in_terminal(root, args)
  local argv = { binary() }
  for _, arg in ipairs(args) do
    table.insert(argv, arg)
  end
  if vim.fn.executable(argv[1]) ~= 1 then
    notify(('cannot run %q: not found or not executable'):format(argv[1]), vim.log.levels.ERROR)
    return nil
  end
  vim.cmd('botright 12new')
  local job
  if has('nvim-0.11') then
    job = vim.fn.jobstart(argv, { term = true, cwd = root })
  else
    job = vim.fn.termopen(argv, { cwd = root })
  end
  if job <= 0 then
    notify(('could not start %s'):format(table.concat(argv, ' ')), vim.log.levels.ERROR)
    return nil
  end
  vim.cmd('normal! G')
  return job
end

-- ------------------------------------------------------------------------------------------
-- Reviewing a proposal

--- The text of the value of `key` in the top-level JSON object `text`, exactly as written, so
--- the proposed recording keeps the key order and layout of the files in .saffron/cache.
function M.json_member_text(text, key)
  local length = #text
  local position = 1

  local function skip_space()
    position = text:find('[^ \t\r\n]', position) or (length + 1)
  end

  local function skip_string()
    -- at the opening quote; returns the string's content (escapes left as written)
    local start = position + 1
    local index = start
    while index <= length do
      local char = text:sub(index, index)
      if char == '\\' then
        index = index + 2
      elseif char == '"' then
        position = index + 1
        return text:sub(start, index - 1)
      else
        index = index + 1
      end
    end
    error('unterminated string')
  end

  local function skip_value()
    skip_space()
    local start = position
    local first = text:sub(position, position)
    if first == '"' then
      skip_string()
    elseif first == '{' or first == '[' then
      local depth = 0
      while position <= length do
        local char = text:sub(position, position)
        if char == '"' then
          skip_string()
        else
          if char == '{' or char == '[' then
            depth = depth + 1
          elseif char == '}' or char == ']' then
            depth = depth - 1
          end
          position = position + 1
          if depth == 0 then
            break
          end
        end
      end
    else
      position = text:find('[,}%]]', position) or (length + 1)
    end
    return text:sub(start, position - 1):gsub('%s+$', '')
  end

  skip_space()
  if text:sub(position, position) ~= '{' then
    return nil
  end
  position = position + 1
  while position <= length do
    skip_space()
    local char = text:sub(position, position)
    if char == '}' then
      return nil
    elseif char == ',' then
      position = position + 1
    elseif char == '"' then
      local name = skip_string()
      skip_space()
      position = position + 1 -- the colon
      local value = skip_value()
      if name == key then
        return value
      end
    else
      return nil
    end
  end
  return nil
end

--- Lines of a nested JSON value, dedented to the indentation of its closing line.
local function dedent_value(value)
  local lines = vim.split(value, '\n', true)
  local last = lines[#lines]
  local indent = #last:match('^(%s*)')
  for index = 2, #lines do
    local line = lines[index]
    local leading = #line:match('^(%s*)')
    lines[index] = line:sub(math.min(indent, leading) + 1)
  end
  return lines
end

local function read_file(path)
  local handle = io.open(path, 'rb')
  if not handle then
    return nil
  end
  local text = handle:read('*a')
  handle:close()
  return text
end

local function scratch(name, lines, filetype)
  for _, existing in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(existing) == name then
      pcall(vim.api.nvim_buf_delete, existing, { force = true })
    end
  end
  local bufnr = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].buftype = 'nofile'
  vim.bo[bufnr].bufhidden = 'wipe'
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].filetype = filetype
  pcall(vim.api.nvim_buf_set_name, bufnr, name)
  return bufnr
end

--- Opens the committed recording beside the proposal's recording in a new tab, in diff mode,
--- then asks Accept / Reject. `relative` is the proposal's path from `root`.
function M.review(root, relative)
  local path = inside_root(root, relative)
  local text = path and read_file(path)
  if not text then
    notify(('%s is gone: it was accepted or rejected already'):format(relative), vim.log.levels.WARN)
    return
  end
  local ok, proposal = pcall(vim.json.decode, text)
  if not ok or type(proposal) ~= 'table' then
    notify(('%s is not valid JSON'):format(relative), vim.log.levels.ERROR)
    return
  end
  local scenario = type(proposal.scenario) == 'table' and proposal.scenario or {}
  local cache_path = scenario.cachePath
  local recording = M.json_member_text(text, 'recording')
  if type(cache_path) ~= 'string' or recording == nil or recording:sub(1, 1) ~= '{' then
    notify(('%s has no scenario.cachePath or recording'):format(relative), vim.log.levels.ERROR)
    return
  end
  local committed = inside_root(root, cache_path)
  if not committed then
    notify(('%s names a recording outside the project: %s'):format(relative, cache_path), vim.log.levels.ERROR)
    return
  end

  vim.cmd('tabnew')
  if exists(committed) then
    vim.cmd('edit ' .. vim.fn.fnameescape(committed))
  else
    scratch('saffron://no-committed-recording/' .. cache_path, {}, 'json')
  end
  vim.cmd('diffthis')
  vim.cmd('rightbelow vnew')
  scratch('saffron://proposal/' .. relative, dedent_value(recording), 'json')
  vim.cmd('diffthis')

  local accept = function(extra)
    local args = { 'accept' }
    for _, arg in ipairs(extra or {}) do
      table.insert(args, arg)
    end
    table.insert(args, relative)
    M.run_in_terminal(root, args)
  end
  local reject = function()
    M.run_in_terminal(root, { 'reject', relative })
  end
  local edits = type(proposal.featureEdits) == 'table' and #proposal.featureEdits or 0
  for _, bufnr in ipairs(vim.fn.tabpagebuflist()) do
    vim.api.nvim_buf_create_user_command(bufnr, 'SaffronAccept', function(command)
      accept(command.bang and { '--with-feature-edit' } or nil)
    end, { bang = true, desc = 'saffron accept (with ! also apply the feature edits)' })
    vim.api.nvim_buf_create_user_command(bufnr, 'SaffronReject', reject, { desc = 'saffron reject' })
  end

  local choices = { 'Accept' }
  if edits > 0 then
    table.insert(choices, 'Accept with feature edits')
  end
  table.insert(choices, 'Reject')
  table.insert(choices, 'Later (:SaffronAccept, :SaffronAccept!, :SaffronReject)')
  local name = scenario.name or cache_path
  local prompt = ('Proposal for "%s"'):format(name)
  if type(proposal.narrative) == 'string' and proposal.narrative ~= '' then
    prompt = prompt .. ' - ' .. proposal.narrative
  end
  vim.schedule(function()
    vim.cmd('redraw')
    vim.ui.select(choices, { prompt = prompt }, function(choice)
      if choice == 'Accept' then
        accept()
      elseif choice == 'Accept with feature edits' then
        accept({ '--with-feature-edit' })
      elseif choice == 'Reject' then
        reject()
      end
    end)
  end)
end

-- ------------------------------------------------------------------------------------------
-- The commands code lenses name. The server only emits them; the client carries them out.

local function lens_argument(command)
  local argument = command.arguments and command.arguments[1]
  if type(argument) == 'string' and argument ~= '' then
    return argument
  end
  return nil
end

local function scenario_file(argument)
  return argument:match('^(.*):%d+$') or argument
end

M.commands = {
  ['saffron.run'] = function(command, ctx)
    local argument = lens_argument(command)
    if argument then
      M.run_in_terminal(root_for(scenario_file(argument), ctx and ctx.bufnr, ctx and ctx.client_id), { 'run', argument })
    end
  end,
  ['saffron.runFeature'] = function(command, ctx)
    local argument = lens_argument(command)
    if argument then
      M.run_in_terminal(root_for(argument, ctx and ctx.bufnr, ctx and ctx.client_id), { 'run', argument })
    end
  end,
  ['saffron.reviewProposal'] = function(command, ctx)
    local argument = lens_argument(command)
    if argument then
      M.review(root_for(argument, ctx and ctx.bufnr, ctx and ctx.client_id), argument)
    end
  end,
}

-- ------------------------------------------------------------------------------------------
-- Clients

local function all_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

--- The running `saffron` clients, of one buffer when `bufnr` is given.
function M.clients(bufnr)
  local found = {}
  for _, client in ipairs(all_clients()) do
    if client.name == 'saffron' and (bufnr == nil or vim.lsp.buf_is_attached(bufnr, client.id)) then
      table.insert(found, client)
    end
  end
  return found
end

local function language_id(_, filetype)
  if filetype == 'saffron' then
    return 'saffron'
  end
  return 'gherkin'
end

local function refresh_codelens(bufnr)
  if has('nvim-0.10') then
    pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
  elseif vim.api.nvim_get_current_buf() == bufnr then
    pcall(vim.lsp.codelens.refresh)
  end
end

local function on_attach(client, bufnr)
  -- <C-x><C-o> completes from the server. Neovim 0.8+ sets this itself when it is empty, but
  -- cucumber's ftplugin points it at step definitions in Ruby, which Saffron has none of.
  local omnifunc = vim.bo[bufnr].omnifunc
  if omnifunc == '' or omnifunc == 'CucumberComplete' then
    vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
  end
  if M.options.codelens then
    local group = vim.api.nvim_create_augroup('saffron_codelens_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost', 'CursorHold' }, {
      group = group,
      buffer = bufnr,
      callback = function()
        refresh_codelens(bufnr)
      end,
    })
    refresh_codelens(bufnr)
  end
  if M.options.on_attach then
    M.options.on_attach(client, bufnr)
  end
end

local function on_exit(code, signal, client_id)
  M.last_exit = { code = code, signal = signal, client_id = client_id }
  if code ~= 0 and signal ~= 15 then
    notify(
      ('`%s` exited with code %d; its stderr is in %s'):format(
        table.concat(M.options.cmd, ' '),
        code,
        vim.lsp.get_log_path()
      ),
      vim.log.levels.WARN
    )
  end
end

--- The client configuration shared by every API.
local function client_config()
  local options = M.options
  return {
    name = 'saffron',
    cmd = options.cmd,
    get_language_id = language_id,
    on_attach = on_attach,
    on_exit = on_exit,
    commands = M.commands,
    capabilities = options.capabilities or vim.lsp.protocol.make_client_capabilities(),
    settings = options.settings,
    init_options = options.init_options,
    flags = options.flags,
  }
end

local function wants(bufnr)
  local filetype = vim.bo[bufnr].filetype
  if vim.bo[bufnr].buftype ~= '' then
    return false
  end
  for _, candidate in ipairs(M.options.filetypes) do
    if candidate == filetype then
      return true
    end
  end
  return false
end

-- Neovim 0.7: one client per root, started by hand and attached to each buffer.
local clients_by_root = {}

--- Starts (or reuses) the client for `bufnr` and attaches it; for the 'start' and
--- 'start_client' APIs.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not wants(bufnr) or vim.fn.executable(M.options.cmd[1]) ~= 1 then
    -- setup() has said that the command cannot run.
    return nil
  end
  local directory = buffer_directory(bufnr)
  local root = M.find_root(directory, M.options.root_markers)
  local config = client_config()
  config.root_dir = root
  if M.api == 'start' then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local key = root or ('file:' .. vim.api.nvim_buf_get_name(bufnr))
  local client_id = clients_by_root[key]
  if client_id == nil or vim.lsp.get_client_by_id(client_id) == nil then
    if root then
      config.workspace_folders = { { uri = vim.uri_from_fname(root), name = root } }
    end
    client_id = vim.lsp.start_client(config)
    if client_id == nil then
      return nil
    end
    clients_by_root[key] = client_id
  end
  vim.lsp.buf_attach_client(bufnr, client_id)
  return client_id
end

local function pick_api(requested)
  if requested then
    return requested
  end
  if vim.lsp.config and vim.lsp.enable then
    return 'config'
  end
  if vim.lsp.start then
    return 'start'
  end
  return 'start_client'
end

--- Stops the clients, waits for them to end, and starts them again for every open buffer.
function M.restart()
  local stopped = {}
  for _, client in ipairs(M.clients()) do
    table.insert(stopped, client.id)
    vim.lsp.stop_client(client.id)
  end
  vim.wait(3000, function()
    for _, id in ipairs(stopped) do
      if vim.lsp.get_client_by_id(id) ~= nil then
        return false
      end
    end
    return true
  end, 20)
  for _, id in ipairs(stopped) do
    if vim.lsp.get_client_by_id(id) ~= nil then
      vim.lsp.stop_client(id, true)
    end
  end
  clients_by_root = {}
  if M.api == 'config' then
    -- Enabling again starts the config for every open buffer it applies to.
    vim.lsp.enable('saffron')
  else
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        M.attach(bufnr)
      end
    end
  end
end

-- ------------------------------------------------------------------------------------------
-- :SaffronRun and :SaffronRunFeature

-- English scenario headers, for when the server is not there to say where scenarios are.
local scenario_headers = { 'Scenario Outline', 'Scenario Template', 'Scenario', 'Example', 'Fixture' }

local function header_line(line)
  local trimmed = line:match('^%s*(.-)%s*$')
  for _, keyword in ipairs(scenario_headers) do
    if trimmed:sub(1, #keyword) == keyword and trimmed:sub(#keyword + 1):match('^%s*:') then
      return true
    end
  end
  return false
end

--- The `saffron.run` lenses of `bufnr`, asked of its saffron client: { { line = 0-based, argument } }.
local function run_lenses(bufnr)
  if #M.clients(bufnr) == 0 then
    return nil
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeLens', params, 3000)
  if not responses then
    return nil
  end
  local saffron_ids = {}
  for _, client in ipairs(M.clients(bufnr)) do
    saffron_ids[client.id] = true
  end
  local lenses = {}
  for client_id, response in pairs(responses) do
    if saffron_ids[client_id] and type(response.result) == 'table' then
      for _, lens in ipairs(response.result) do
        local command = lens.command
        if command and command.command == 'saffron.run' and lens_argument(command) then
          table.insert(lenses, { line = lens.range.start.line, argument = lens_argument(command) })
        end
      end
    end
  end
  return lenses
end

--- `{ root, argument }` for the scenario at the cursor: the file and the line of its header.
function M.scenario_at_cursor()
  local bufnr = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return nil
  end
  local file = vim.fn.fnamemodify(name, ':p')
  local root = M.find_root(vim.fn.fnamemodify(file, ':h'), { 'saffron.toml', '.saffron' })
    or M.find_root(vim.fn.fnamemodify(file, ':h'), M.options.root_markers)
    or vim.fn.getcwd()
  local relative = M.relative_to(root, file) or file
  local cursor = vim.api.nvim_win_get_cursor(0)[1] - 1
  local lenses = run_lenses(bufnr)
  if lenses then
    local chosen
    for _, lens in ipairs(lenses) do
      if lens.line <= cursor and (chosen == nil or lens.line > chosen.line) then
        chosen = lens
      end
    end
    if chosen then
      return { root = root_for(scenario_file(chosen.argument), bufnr, M.clients(bufnr)[1].id), argument = chosen.argument }
    end
    return { root = root, argument = relative }
  end
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, cursor + 1, false)
  for index = #lines, 1, -1 do
    if header_line(lines[index]) then
      return { root = root, argument = ('%s:%d'):format(relative, index) }
    end
  end
  return { root = root, argument = relative }
end

function M.run_scenario()
  local target = M.scenario_at_cursor()
  if not target then
    notify('open a .feature or .saffron file to run a scenario', vim.log.levels.WARN)
    return
  end
  M.run_in_terminal(target.root, { 'run', target.argument })
end

function M.run_feature()
  local target = M.scenario_at_cursor()
  if not target then
    notify('open a .feature or .saffron file to run it', vim.log.levels.WARN)
    return
  end
  M.run_in_terminal(target.root, { 'run', scenario_file(target.argument) })
end

--- Proposals waiting for review under the current project, relative to its root.
function M.pending_proposals()
  local directory = buffer_directory(vim.api.nvim_get_current_buf()) or vim.fn.getcwd()
  local root = M.find_root(directory, { 'saffron.toml', '.saffron' }) or vim.fn.getcwd()
  local found = {}
  for _, path in ipairs(vim.fn.globpath(root, '.saffron/proposals/**/*.json', false, true)) do
    table.insert(found, M.relative_to(root, path) or path)
  end
  table.sort(found)
  return root, found
end

function M.review_command(argument)
  local root, proposals = M.pending_proposals()
  if argument and argument ~= '' then
    M.review(root_for(argument, vim.api.nvim_get_current_buf(), nil) or root, argument)
    return
  end
  if #proposals == 0 then
    notify('no proposal is waiting for review')
    return
  end
  vim.ui.select(proposals, { prompt = 'Proposal to review' }, function(choice)
    if choice then
      M.review(root, choice)
    end
  end)
end

-- ------------------------------------------------------------------------------------------
-- Proposals and CI runs, from the CLI's JSON (`saffron proposals --format json`,
-- `saffron runs --json`, `saffron import --json`). The CLI decides; this only lists and asks.

--- Runs `saffron ARGS` in `root` and returns its stdout and exit code (a refusal is JSON too).
local function saffron_json(root, args)
  local command = { binary() }
  for _, arg in ipairs(args) do
    table.insert(command, arg)
  end
  local previous = vim.fn.getcwd()
  vim.cmd('noautocmd lcd ' .. vim.fn.fnameescape(root))
  local output = vim.fn.system(command)
  local code = vim.v.shell_error
  vim.cmd('noautocmd lcd ' .. vim.fn.fnameescape(previous))
  return output, code
end

local function decode(text, what)
  local ok, value = pcall(vim.json.decode, text)
  if not ok or type(value) ~= 'table' then
    return nil, ('%s answered what is not JSON: %s'):format(what, vim.trim(text):sub(1, 200))
  end
  return value
end

local function list(value)
  return type(value) == 'table' and value or {}
end

--- Picker entries from `saffron proposals --format json`: { path, id, text }.
function M.proposal_entries(json)
  local value, problem = decode(json, 'saffron proposals')
  if not value then
    return nil, problem
  end
  local entries = {}
  for _, proposal in ipairs(list(value.proposals)) do
    local parts = { tostring(proposal.scenario or proposal.path), tostring(proposal.feature or '') }
    if proposal.stale == true then
      table.insert(parts, 'STALE')
    elseif type(proposal.unverified) == 'string' then
      table.insert(parts, 'UNVERIFIED')
    elseif #list(proposal.refused) > 0 then
      table.insert(parts, 'REFUSED')
    elseif #list(proposal.differentControls) > 0 then
      table.insert(parts, 'DIFFERENT CONTROL')
    end
    local from = type(proposal.importedFrom) == 'table' and proposal.importedFrom or nil
    if from and type(from.run) == 'table' and from.run.id then
      table.insert(parts, 'from CI run ' .. tostring(from.run.id))
    elseif from and from.bundle then
      table.insert(parts, 'from ' .. tostring(from.bundle))
    end
    table.insert(entries, { path = proposal.path, id = proposal.id, text = table.concat(parts, ' · ') })
  end
  return entries
end

--- Picker entries from `saffron runs --json`: { id, link, text }, or nil and the problem.
function M.run_entries(json)
  local value, problem = decode(json, 'saffron runs')
  if not value then
    return nil, problem
  end
  if type(value.problem) == 'table' then
    return nil, tostring(value.problem.message)
  end
  local entries = {}
  for _, run in ipairs(list(value.runs)) do
    local outcome = (run.conclusion ~= nil and run.conclusion ~= '') and run.conclusion or run.status
    local text = ('%s %s #%s · %s · %s'):format(
      tostring(run.id),
      tostring(run.name),
      tostring(run.number or '?'),
      tostring(outcome),
      tostring(run.commit or ''):sub(1, 7)
    )
    if #list(run.pending) > 0 then
      text = text .. (' · %d pending'):format(#list(run.pending))
    end
    table.insert(entries, { id = run.id, link = run.link, text = text })
  end
  return entries
end

--- The lines of `saffron import --json`'s outcome, and whether it was refused.
function M.import_lines(json)
  local value, problem = decode(json, 'saffron import')
  if not value then
    return { problem }, true
  end
  if type(value.error) == 'string' then
    local lines = { 'refused: ' .. value.error }
    if type(value.hint) == 'string' then
      table.insert(lines, 'hint: ' .. value.hint)
    end
    return lines, true
  end
  local lines = {}
  for _, warning in ipairs(list(value.warnings)) do
    table.insert(lines, 'warning: ' .. tostring(warning))
  end
  for _, proposal in ipairs(list(value.proposals)) do
    local line = ('%s: %s'):format(tostring(proposal.outcome), tostring(proposal.path))
    if #list(proposal.reasons) > 0 then
      line = line .. ' (' .. table.concat(list(proposal.reasons), '; ') .. ')'
    end
    table.insert(lines, line)
  end
  if value.changed == false then
    table.insert(lines, 'nothing changed: imported before')
  end
  if #lines == 0 then
    table.insert(lines, "no proposal in the bundles")
  end
  return lines, false
end

local function project_root()
  local directory = buffer_directory(vim.api.nvim_get_current_buf()) or vim.fn.getcwd()
  return M.find_root(directory, { 'saffron.toml', '.saffron' }) or vim.fn.getcwd()
end

--- Picks one of `entries` (each with its `text`) and calls `chosen` with it; says `problem`
--- when the CLI gave no entries, and `none` when it gave an empty list.
local function pick(entries, problem, none, prompt, chosen)
  if not entries then
    notify(problem, vim.log.levels.ERROR)
    return
  end
  if #entries == 0 then
    notify(none)
    return
  end
  vim.ui.select(entries, {
    prompt = prompt,
    format_item = function(entry)
      return entry.text
    end,
  }, function(entry)
    if entry then
      chosen(entry)
    end
  end)
end

--- :SaffronProposals: pick a pending proposal (with what holds it back and where it came from)
--- and review it.
function M.proposals_command()
  local root = project_root()
  local entries, problem = M.proposal_entries((saffron_json(root, { 'proposals', '--format', 'json' })))
  pick(entries, problem, 'no proposal is waiting for review', 'Proposal to review', function(entry)
    M.review(root, entry.path)
  end)
end

--- Imports with `saffron import ARGS --json` and shows what it did; returns the lines.
function M.import(root, args)
  local command = { 'import' }
  for _, arg in ipairs(args) do
    table.insert(command, arg)
  end
  table.insert(command, '--json')
  local lines, refused = M.import_lines((saffron_json(root, command)))
  notify(table.concat(lines, '\n'), refused and vim.log.levels.ERROR or vim.log.levels.INFO)
  return lines, refused
end

--- :SaffronRuns: pick one of the branch's CI runs, then import its heal bundles or open it.
function M.runs_command()
  local root = project_root()
  local entries, problem = M.run_entries((saffron_json(root, { 'runs', '--json' })))
  pick(entries, problem, 'no CI run of this branch', 'CI run', function(entry)
    vim.ui.select({ 'Import its heal bundles', 'Open it' }, { prompt = 'Run ' .. tostring(entry.id) }, function(choice)
      if choice == 'Import its heal bundles' then
        M.import(root, { '--run', tostring(entry.id) })
      elseif choice == 'Open it' and type(entry.link) == 'string' and entry.link:match('^https?://') then
        if vim.ui.open then
          vim.ui.open(entry.link)
        else
          notify(entry.link)
        end
      end
    end)
  end)
end

-- ------------------------------------------------------------------------------------------
-- Tree-sitter

--- The grammar folder of the repository this plugin is in (editors/nvim/lua/saffron/ → root).
local function bundled_grammar()
  local source = debug.getinfo(1, 'S').source:gsub('^@', '')
  local repository = vim.fn.fnamemodify(source, ':p:h:h:h:h:h')
  local grammar = join(repository, 'grammars/tree-sitter-saffron')
  if exists(join(grammar, 'src/parser.c')) then
    return grammar
  end
  return nil
end

M.grammar_dir = bundled_grammar

local function register_filetypes()
  if vim.treesitter.language and vim.treesitter.language.register then
    vim.treesitter.language.register('saffron', M.options.filetypes)
    return true
  end
  return false
end

--- Tells nvim-treesitter where the grammar is, on its `master` branch (Neovim 0.10/0.11:
--- parser_configs) or its `main` branch (Neovim 0.12+: the parsers table, on User TSUpdate).
local function register_with_nvim_treesitter(grammar)
  local ok, parsers = pcall(require, 'nvim-treesitter.parsers')
  if not ok or type(parsers) ~= 'table' then
    return false
  end
  if type(parsers.get_parser_configs) == 'function' then
    parsers.get_parser_configs().saffron = {
      install_info = {
        url = grammar,
        files = { 'src/parser.c', 'src/scanner.c' },
        generate_requires_npm = false,
        requires_generate_from_grammar = false,
      },
      filetype = 'saffron',
    }
    if not register_filetypes() and type(parsers.filetype_to_parsername) == 'table' then
      for _, filetype in ipairs(M.options.filetypes) do
        parsers.filetype_to_parsername[filetype] = 'saffron'
      end
    end
    return true
  end
  local function add()
    require('nvim-treesitter.parsers').saffron = { install_info = { path = grammar }, tier = 3 }
  end
  add()
  vim.api.nvim_create_autocmd('User', {
    pattern = 'TSUpdate',
    group = vim.api.nvim_create_augroup('saffron_treesitter', { clear = true }),
    callback = add,
  })
  register_filetypes()
  return true
end

local function parser_available()
  if not (vim.treesitter.language and vim.treesitter.language.add) then
    return false
  end
  -- Neovim 0.11 returns true, or nil and the reason.
  local ok, added = pcall(vim.treesitter.language.add, 'saffron')
  return ok and added == true
end

--- Compiles the grammar's parser into `<stdpath("data")>/site/parser/saffron.so`, where Neovim
--- finds parsers without nvim-treesitter. Needs a C compiler; the committed parser is ABI 15,
--- which Neovim 0.11+ loads.
function M.build_parser()
  local grammar = bundled_grammar()
  if not grammar then
    notify('grammars/tree-sitter-saffron was not found beside this plugin', vim.log.levels.ERROR)
    return false
  end
  local compiler = vim.env.CC or 'cc'
  if vim.fn.executable(compiler) ~= 1 then
    notify(('no C compiler (%s) to build the parser with'):format(compiler), vim.log.levels.ERROR)
    return false
  end
  local directory = join(vim.fn.stdpath('data'), 'site/parser')
  vim.fn.mkdir(directory, 'p')
  local output = join(directory, 'saffron.so')
  local src = join(grammar, 'src')
  local result = vim.fn.system({
    compiler, '-O2', '-shared', '-fPIC', '-I', src,
    join(src, 'parser.c'), join(src, 'scanner.c'), '-o', output,
  })
  if vim.v.shell_error ~= 0 then
    notify('building the parser failed:\n' .. result, vim.log.levels.ERROR)
    return false
  end
  -- Load it now: a parser directory created after startup is not searched until a restart.
  if vim.treesitter.language and vim.treesitter.language.add then
    pcall(vim.treesitter.language.add, 'saffron', { path = output })
  end
  notify('built ' .. output)
  return true
end

local function setup_treesitter()
  -- The committed parser is ABI 15; older Neovims (and their nvim-treesitter) cannot load it,
  -- and keep the Vim syntax (syntax/saffron.vim).
  if (vim.treesitter.language_version or 0) < 15 then
    return
  end
  local grammar = bundled_grammar()
  if grammar then
    register_with_nvim_treesitter(grammar)
  end
  register_filetypes()
  vim.api.nvim_create_autocmd('FileType', {
    group = vim.api.nvim_create_augroup('saffron_treesitter_start', { clear = true }),
    pattern = M.options.filetypes,
    callback = function(args)
      if vim.treesitter.start and parser_available() then
        pcall(vim.treesitter.start, args.buf, 'saffron')
      end
    end,
  })
end

-- ------------------------------------------------------------------------------------------

--- Configures the language server for Saffron buffers. Call once, from your config:
---   require('saffron').setup({ cmd = { 'saffron', 'lsp' } })
function M.setup(options)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(defaults), options or {})
  -- Lists replace the defaults instead of merging into them index by index.
  for _, key in ipairs({ 'cmd', 'root_markers', 'filetypes' }) do
    if options and options[key] then
      M.options[key] = options[key]
    end
  end
  M.api = pick_api(M.options.api)

  for name, handler in pairs(M.commands) do
    vim.lsp.commands[name] = handler
  end

  if vim.fn.executable(M.options.cmd[1]) ~= 1 then
    notify(
      ('%q is not executable: install saffron (cargo install --path crates/saffron-cli) or pass cmd to setup()'):format(
        M.options.cmd[1]
      ),
      vim.log.levels.WARN
    )
  end

  if M.api == 'config' then
    local config = client_config()
    config.filetypes = M.options.filetypes
    config.root_markers = M.options.root_markers
    vim.lsp.config('saffron', config)
    vim.lsp.enable('saffron')
  else
    vim.api.nvim_create_autocmd('FileType', {
      group = vim.api.nvim_create_augroup('saffron_lsp', { clear = true }),
      pattern = M.options.filetypes,
      callback = function(args)
        M.attach(args.buf)
      end,
    })
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        M.attach(bufnr)
      end
    end
  end

  if M.options.treesitter then
    setup_treesitter()
  end
  return M
end

return M
