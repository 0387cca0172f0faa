import Foundation
import Synchronization
import Testing
import VTCapture
import VTCore
@testable import VTEvents
@testable import VTRecorder

/// What signals, the control socket and HTTP ask of a recording, checked and carried out in
/// one place: the same request gets the same answer whichever way it came.
@Suite struct RecordingCommandsTests {
    /// Who asked for each stop.
    final class Askers: Sendable {
        private let names = Mutex<[String]>([])
        func append(_ name: String) { names.withLock { $0.append(name) } }
        var all: [String] { names.withLock { $0 } }
    }

    static func commands(events: EventInbox?, stop: StopRequest = StopRequest(), overwrite: Bool = false,
                         stillWait: Double = 5, stopped: Askers? = nil) -> RecordingCommands {
        RecordingCommands(events: events, stop: stop, overwrite: overwrite, stillWait: stillWait,
                          stopping: { who, _ in stopped?.append(who) })
    }

    static func answer(_ commands: RecordingCommands, _ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(commands.answer(line).utf8)) as? [String: Any])
    }

    @Test func anEventIsCheckedOnceForEveryWayIn() throws {
        let inbox = EventInbox()
        let commands = Self.commands(events: inbox)
        try commands.event(label: "door", duration: 10, from: .http)
        #expect(try Self.answer(commands, "event gate open")["ok"] as? Bool == true)
        try commands.endEvents(from: .control)
        #expect(inbox.take().map(\.kind) == [.begin(label: "door", duration: 10), .begin(label: "gate", duration: nil), .end])
        // The same bad label is refused with the same words over HTTP as on the socket.
        #expect(throws: RecordingCommands.Refusal.self) { try commands.event(label: "../x", duration: 0, from: .http) }
        for (label, duration) in [("../x", 0.0), ("door", -1), ("door", 90_000)] {
            #expect(throws: RecordingCommands.Refusal.self) { try commands.event(label: label, duration: duration, from: .http) }
        }
        #expect(inbox.take().isEmpty)
    }

    @Test func withoutEventsEveryWayInIsToldWhy() throws {
        let commands = Self.commands(events: nil)
        #expect(throws: RecordingCommands.Refusal.noEvents) { try commands.event(label: nil, duration: 0, from: .signal) }
        #expect(throws: RecordingCommands.Refusal.noEvents) { try commands.endEvents(from: .control) }
        let answer = try Self.answer(commands, "event")
        #expect(answer["ok"] as? Bool == false && answer["error"] as? String == RecordingCommands.Refusal.noEvents.description)
    }

    @Test func aStopSaysWhoAskedAndStopsTheRecordingToBe() throws {
        let stop = StopRequest()
        let stopped = Askers()
        let commands = Self.commands(events: nil, stop: stop, stopped: stopped)
        #expect(try Self.answer(commands, "stop")["ok"] as? Bool == true)
        #expect(stop.isStopRequested)
        commands.stop(by: "POST /stop")
        #expect(stopped.all == ["the control socket's stop", "POST /stop"])
    }

    @Test func stillsAndStatusBeforeTheRecordingHasStarted() async throws {
        let commands = Self.commands(events: nil)
        #expect(commands.status() == nil)
        let status = try #require(try Self.answer(commands, "status")["status"] as? [String: Any])
        #expect(status["frames_captured"] as? Int == 0)
        await #expect(throws: RecordingCommands.Refusal.notStarted) { try await commands.still() }
        commands.attach(stills: .none(why: "no pictures here"))
        await #expect(throws: RecordingCommands.Refusal("no pictures here")) { try await commands.still() }
        let snapshot = try Self.answer(commands, "snapshot /tmp/x.jpg")
        #expect(snapshot["ok"] as? Bool == false && snapshot["error"] as? String == "no pictures here", "\(snapshot)")
    }

    /// A still asked for when no picture comes (the recording ended) is answered, in time on
    /// the socket's thread, and answered over HTTP too.
    @Test func aStillWithoutAPictureIsAnsweredWithinTheWait() async throws {
        let commands = Self.commands(events: nil, stillWait: 0.2)
        commands.attach(stills: .taker(StillTaker(requestsOnly: { _ in }), jpeg: { _ in [0xFF, 0xD8] }))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("commands-\(UUID().uuidString).jpg").path
        let start = Date()
        let answer = try Self.answer(commands, "snapshot \(path)")
        #expect(Date().timeIntervalSince(start) < 3)
        #expect(answer["error"] as? String == "no picture came within 0.2 s", "\(answer)")
        #expect(!FileManager.default.fileExists(atPath: path))
        await #expect(throws: RecordingCommands.Refusal("no picture came within 0.2 s")) { try await commands.still() }
    }

    @Test func aSnapshotKeepsAnExistingFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("commands-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("still.jpg").path
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        let answer = try Self.answer(Self.commands(events: nil), "snapshot \(path)")
        #expect((answer["error"] as? String)?.contains("already exists") == true, "\(answer)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data([1, 2, 3]))
        let folder = try Self.answer(Self.commands(events: nil, overwrite: true), "snapshot \(directory.path)")
        #expect(folder["ok"] as? Bool == false)
    }
}
