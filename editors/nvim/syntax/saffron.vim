" Vim syntax for Saffron's .saffron dialect: Neovim's Gherkin syntax (cucumber) plus StepSet
" and Fixture. For Neovims without tree-sitter highlighting (0.7-0.10 with this grammar); with a
" `saffron` tree-sitter parser installed, tree-sitter highlighting takes over.
if exists('b:current_syntax')
  finish
endif

runtime! syntax/cucumber.vim
unlet! b:current_syntax

" cucumber.vim reads every line after `Feature:` up to the first Background or Scenario as the
" feature's description, so a file of StepSet blocks would read as one long description. Stop
" the description at any line that starts with a block header: up to four words and a colon
" (the header keywords of every Gherkin language, StepSet and Fixture included).
syn clear cucumberUnparsed cucumberUnparsedComment
syn match cucumberUnparsed "\%([^ \t:]\+\%(\s\+[^ \t:]\+\)\{,3}\s*:\)\@!\S.*" nextgroup=cucumberUnparsedComment,cucumberUnparsed,cucumberTags skipwhite skipempty contained
syn match cucumberUnparsedComment "#.*" nextgroup=cucumberUnparsedComment,cucumberUnparsed,cucumberTags skipwhite skipempty contained

" `StepSet: name` and `Fixture: name` open a block; `StepSet name` invokes a set.
syn match saffronBlock "\%(^\s*\)\@<=\%(StepSet\|Fixture\)\ze\s*:" nextgroup=saffronBlockColon
syn match saffronBlockColon "\s*:" contained nextgroup=saffronBlockName skipwhite
syn match saffronBlockName ".*$" contained
syn match saffronInvocation "\%(^\s*\)\@<=StepSet\ze\s\+[^: \t]" nextgroup=saffronSetName skipwhite
syn match saffronSetName ".*$" contained

hi def link saffronBlock       Define
hi def link saffronBlockName   Function
hi def link saffronInvocation  Keyword
hi def link saffronSetName     Function

let b:current_syntax = 'saffron'
