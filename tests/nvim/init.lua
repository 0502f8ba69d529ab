-- Minimal Neovim configuration for tests/nvim/run.sh: the plugin from this repository, the
-- server from SAFFRON_BIN, nothing else. The checks run once Neovim has started (VimEnter).

local repo = assert(os.getenv('SAFFRON_REPO'), 'run tests/nvim/run.sh, which sets SAFFRON_REPO')
local bin = assert(os.getenv('SAFFRON_BIN'), 'SAFFRON_BIN is not set')

vim.opt.runtimepath:prepend(repo .. '/editors/nvim')
vim.opt.swapfile = false
vim.opt.more = false
vim.cmd('filetype plugin on')
vim.cmd('syntax on')
vim.lsp.set_log_level('warn')

require('saffron').setup({
  cmd = { bin, 'lsp' },
  -- The test asks for lenses itself.
  codelens = false,
  treesitter = true,
  -- 'config', 'start' or 'start_client' exercises one LSP code path on a newer Neovim.
  api = os.getenv('SAFFRON_NVIM_API') ~= '' and os.getenv('SAFFRON_NVIM_API') or nil,
})

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    vim.schedule(function()
      -- An error outside the checks would leave headless Neovim waiting at a prompt.
      local ok, problem = pcall(dofile, repo .. '/tests/nvim/test.lua')
      if not ok then
        io.stdout:write('FAILED tests/nvim/test.lua stopped: ', tostring(problem), '\n', '0 passed, 1 failed\n')
        vim.cmd('cquit 1')
      end
    end)
  end,
})
