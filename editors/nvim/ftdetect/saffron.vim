" *.saffron is Saffron's Gherkin dialect. (*.feature keeps Neovim's own filetype, cucumber.)
autocmd BufNewFile,BufRead *.saffron setfiletype saffron
