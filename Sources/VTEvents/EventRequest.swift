import Synchronization
import VTCore

/// Something asked for an event clip: a signal, a line on the control socket, the motion
/// detector, an HTTP request. Every way in makes one of these and hands it to the same
/// `EventInbox`, so each behaves alike.
public struct EventRequest: Sendable, Equatable {
    public enum Source: String, Codable, Sendable {
        case signal
        case control
        case motion
        case http
    }

    public enum Kind: Sendable, Equatable {
        /// An event now, lasting `duration` seconds (0: a moment, as SIGUSR1); nil: until `end`.
        case begin(label: String?, duration: Double?)
        /// The events this source began to last until ended end now.
        case end
    }

    public var source: Source
    public var kind: Kind
    /// CLOCK_MONOTONIC nanoseconds when it was asked: mapped onto the stream's times through
    /// the pictures' capture times.
    public var time: Int64

    public init(source: Source, kind: Kind, time: Int64 = MonotonicClock.nanoseconds()) {
        self.source = source
        self.kind = kind
        self.time = time
    }

    /// A label names a file (`{label}`): letters, digits, '.', '_' and '-', at most 64, not
    /// starting with a dot.
    public static func isValidLabel(_ label: String) -> Bool {
        !label.isEmpty && label.utf8.count <= 64 && !label.hasPrefix(".")
            && label.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)) }
    }
}

/// Where requests wait for the encoder thread, which takes them with the next picture written.
/// Any thread may add; the signal thread does so without taking anything but this lock.
public final class EventInbox: Sendable {
    private let waiting = Mutex<[EventRequest]>([])

    public init() {}

    public func add(_ request: EventRequest) {
        waiting.withLock { $0.append(request) }
    }

    func take() -> [EventRequest] {
        waiting.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
    }
}
