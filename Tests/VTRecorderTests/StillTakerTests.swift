import Dispatch
import Synchronization
import Testing
import VTCapture
import VTCore
@testable import VTRecorder

/// `--snapshot`'s still thread: a still at the first frame and then once per interval, the
/// frame held only while its still is made, stills that come due meanwhile skipped and
/// counted, failures counted and warned about without stopping the next still. Each test
/// hands off through semaphores: nothing waits on the clock.
@Suite struct StillTakerTests {
    /// Which frames' buffers have gone back, from any thread.
    final class Releases: Sendable {
        private let released = Mutex<[UInt64]>([])
        func append(_ sequence: UInt64) { released.withLock { $0.append(sequence) } }
        var sequences: [UInt64] { released.withLock { $0 } }
    }

    /// Frame `sequence` at `seconds`; its picture's first byte is the sequence, so a still
    /// shows which frame it was made from.
    static func frame(_ sequence: UInt64, at seconds: Double, _ releases: Releases) -> CapturedFrame {
        let storage = PixelBuffer(format: .i420, width: 16, height: 16)
        storage.planes[0].baseAddress[0] = UInt8(sequence)
        let buffer = PixelBuffer(format: .i420, width: 16, height: 16, planes: storage.planes) { _ in
            _ = storage
            releases.append(sequence)
        }
        return CapturedFrame(PixelBufferLease(handingOut: buffer), pts: MediaTime(seconds: seconds, timescale: 1_000_000), sequence: sequence)
    }

    @Test func stillsComingDueWhileOneIsMadeAreSkippedAndFramesNotWantedGoBackAtOnce() {
        let releases = Releases()
        let taken = Mutex<[UInt8]>([])
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let stills = StillTaker(interval: 0.5, take: { still in
            guard case .picture(let picture) = still else { preconditionFailure("a picture was offered") }
            taken.withLock { $0.append(picture.planes[0].baseAddress[0]) }
            started.signal()
            gate.wait()
        }, warn: { _ in Issue.record("no still fails here") })
        stills.offer(Self.frame(0, at: 0, releases))
        started.wait()
        // Frame 0 is being made into a still: every later frame goes back as it is offered,
        // and the three that came due while it was made are counted as skipped.
        for sequence in 1...16 {
            stills.offer(Self.frame(UInt64(sequence), at: Double(sequence) / 10, releases))
            #expect(releases.sequences.last == UInt64(sequence))
        }
        #expect(!releases.sequences.contains(0))
        gate.signal()
        stills.finish()
        #expect(taken.withLock { $0 } == [0])
        #expect(releases.sequences.sorted() == Array(0...16))
        #expect(stills.statistics == StillTaker.Statistics(written: 1, skipped: 3, failed: 0))
        // Finished: nothing more is taken, and what is offered goes straight back.
        stills.offer(Self.frame(17, at: 2, releases))
        #expect(releases.sequences.last == 17)
        #expect(stills.statistics.written == 1)
    }

    @Test func aFailedStillIsCountedAndWarnedAndTheNextOneIsStillMade() {
        struct DiskFull: Error {}
        let releases = Releases()
        let taken = Mutex<[UInt8]>([])
        let warned = DispatchSemaphore(value: 0)
        let warnings = Mutex<[String]>([])
        let stills = StillTaker(interval: 1, take: { still in
            guard case .picture(let picture) = still else { preconditionFailure("a picture was offered") }
            let sequence = picture.planes[0].baseAddress[0]
            if sequence == 0 { throw DiskFull() }
            taken.withLock { $0.append(sequence) }
        }, warn: { text in
            warnings.withLock { $0.append(text) }
            warned.signal()
        })
        stills.offer(Self.frame(0, at: 0, releases))
        // The warning comes once the still thread is free again.
        warned.wait()
        stills.offer(Self.frame(1, at: 0.5, releases))
        stills.offer(Self.frame(2, at: 1.25, releases))
        stills.finish()
        #expect(taken.withLock { $0 } == [2])
        #expect(stills.statistics == StillTaker.Statistics(written: 1, skipped: 0, failed: 1))
        #expect(warnings.withLock { $0.count } == 1 && warnings.withLock { $0[0].hasPrefix("snapshot not written") })
        #expect(releases.sequences.sorted() == [0, 1, 2])
    }

    /// A still asked for is made of the next frame offered, and its asker answered; frames
    /// before the request go straight back; one asked for after the end is answered at once.
    @Test func aStillAskedForIsMadeOfTheNextFrame() {
        let releases = Releases()
        let stills = StillTaker(requestsOnly: { _ in Issue.record("no still fails here") })
        stills.offer(Self.frame(0, at: 0, releases))
        #expect(releases.sequences == [0], "no still is made unless asked for")
        let answered = DispatchSemaphore(value: 0)
        let made = Mutex<[UInt8]>([])
        stills.request({ still in
            guard case .picture(let picture) = still else { preconditionFailure("a picture was offered") }
            made.withLock { $0.append(picture.planes[0].baseAddress[0]) }
        },
                       answer: { error in
                           #expect(error == nil)
                           answered.signal()
                       })
        stills.offer(Self.frame(1, at: 0.1, releases))
        answered.wait()
        #expect(made.withLock { $0 } == [1])
        stills.finish()
        #expect(releases.sequences.sorted() == [0, 1])
        #expect(stills.statistics == StillTaker.Statistics())
        let late = Mutex<(any Error)?>(nil)
        stills.request({ _ in Issue.record("no frame comes after the end") }, answer: { error in late.withLock { $0 = error } })
        #expect(late.withLock { $0 } is StillTaker.StillNotTaken)
    }
}
