import Logging

/// swift-log handler for a command-line tool: one plain line per message on standard error,
/// "vtrecord: warning: …", nothing below the configured level.
public struct DiagnosticsLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let program: String

    public init(program: String = "vtrecord", level: Logger.Level) {
        self.program = program
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let label: String
        switch event.level {
        case .trace, .debug: label = "debug: "
        case .info, .notice: label = ""
        case .warning: label = "warning: "
        case .error, .critical: label = "error: "
        }
        writeToStandardError("\(program): \(label)\(event.message)")
    }
}
