import Foundation

/// `/recordings` for a browser: a plain list of the files with links, newest first.
enum RecordingListPage {
    static func html(_ entries: [RecordingLibrary.Entry]) -> String {
        let formatter = ISO8601DateFormatter()
        var rows = ""
        for entry in entries {
            let size = ByteCountFormatter.string(fromByteCount: entry.bytes, countStyle: .file)
            rows += "<tr><td><a href=\"\(escape(entry.url))\">\(escape(entry.name))</a>\(entry.open ? " (recording)" : "")</td>"
            rows += "<td>\(escape(entry.kind))</td><td>\(escape(size))</td><td>\(formatter.string(from: entry.modified))</td></tr>\n"
        }
        return """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>vtrecord: recordings</title><link rel="stylesheet" href="style.css"></head>
        <body><main><h1>Recordings</h1><p><a href="./">Live view</a></p>
        <table><thead><tr><th>File</th><th>Kind</th><th>Size</th><th>Modified</th></tr></thead><tbody>
        \(rows)</tbody></table></main></body></html>
        """
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }
}
