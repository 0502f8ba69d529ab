-- User commands of the Saffron plugin. The language server starts after
-- require('saffron').setup({...}) in your config; a command used before that calls setup()
-- with the defaults.
if vim.g.loaded_saffron then
  return
end
vim.g.loaded_saffron = true

local function saffron()
  local module = require('saffron')
  if module.options == nil then
    module.setup({})
  end
  return module
end

vim.api.nvim_create_user_command('SaffronRun', function()
  saffron().run_scenario()
end, { desc = 'Run the Saffron scenario under the cursor (saffron run FILE:LINE)' })

vim.api.nvim_create_user_command('SaffronRunFeature', function()
  saffron().run_feature()
end, { desc = 'Run the current feature file (saffron run FILE)' })

vim.api.nvim_create_user_command('SaffronReview', function(command)
  saffron().review_command(command.args)
end, {
  nargs = '?',
  complete = function()
    local _, proposals = saffron().pending_proposals()
    return proposals
  end,
  desc = 'Review a pending proposal: diff of the committed and proposed recordings, then accept or reject',
})

vim.api.nvim_create_user_command('SaffronProposals', function()
  saffron().proposals_command()
end, { desc = 'Pick a pending proposal (staleness, the CI run it came from) and review it' })

vim.api.nvim_create_user_command('SaffronRuns', function()
  saffron().runs_command()
end, { desc = "Pick one of the branch's CI runs (saffron runs) and import its heal bundles" })

vim.api.nvim_create_user_command('SaffronImport', function(command)
  saffron().import(saffron().find_root(vim.fn.getcwd(), { 'saffron.toml', '.saffron' }) or vim.fn.getcwd(), command.fargs)
end, { nargs = '+', complete = 'file', desc = 'saffron import PATH... or --run ID, and what it did' })

vim.api.nvim_create_user_command('SaffronRestart', function()
  saffron().restart()
end, { desc = 'Restart saffron lsp' })

vim.api.nvim_create_user_command('SaffronBuildParser', function()
  saffron().build_parser()
end, { desc = 'Compile the tree-sitter parser into stdpath("data")/site/parser/saffron.so' })
