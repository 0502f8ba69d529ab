; Doc string content in the language its media type names: """json, ```xml, """markdown.
(doc_string
  media_type: (media_type) @injection.language
  content: (content) @injection.content)

((comment) @injection.content
  (#set! injection.language "comment"))
