import Foundation
import Synchronization

/// Every file this process's outputs hold open, by absolute path, and who is told when one
/// closes or a write finds the disk full: what retention needs so that it never deletes a
/// file being written, runs again whenever one is finished, and makes room before a write
/// would fail. Process-wide because files are opened deep inside writers, on several threads.
public final class OutputFileRegistry: Sendable {
    public static let shared = OutputFileRegistry()

    private struct State {
        var open: [String: Int] = [:]
        var closed: (@Sendable () -> Void)?
        var full: (@Sendable (String) -> Bool)?
    }

    private let state = Mutex(State())

    /// The absolute, normalized form of `path`, as the registry compares paths.
    public static func key(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// Whether an output holds `path` open now.
    public func isOpen(_ path: String) -> Bool {
        state.withLock { $0.open[Self.key(path)] != nil }
    }

    /// `closed` is told after any output file is closed; `full` is asked, with the path, when a
    /// write finds the disk full, and answers whether it made room (the write is then tried
    /// again). nil stops either.
    public func observe(closed: (@Sendable () -> Void)?, full: (@Sendable (String) -> Bool)?) {
        state.withLock {
            $0.closed = closed
            $0.full = full
        }
    }

    func opened(_ path: String) {
        let key = Self.key(path)
        state.withLock { $0.open[key, default: 0] += 1 }
    }

    func closed(_ path: String) {
        let key = Self.key(path)
        let closed = state.withLock { state in
            if let count = state.open[key], count > 1 { state.open[key] = count - 1 } else { state.open[key] = nil }
            return state.closed
        }
        closed?()
    }

    /// Asks for room on the disk of `path`; false when nobody can make any.
    func makeRoom(for path: String) -> Bool {
        guard let full = state.withLock({ $0.full }) else { return false }
        return full(path)
    }
}
