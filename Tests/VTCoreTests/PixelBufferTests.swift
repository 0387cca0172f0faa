import Dispatch
import Synchronization
import Testing
import VTCore
import VTTestSupport

@Suite struct PixelBufferTests {
    @Test func packedLayoutMatchesY4M() {
        let b = PixelBuffer(format: .i420, width: 33, height: 17)
        #expect(b.planes.count == 3)
        #expect(b.planes[0].bytesPerRow == 33 && b.planes[0].rows == 17)
        #expect(b.planes[1].bytesPerRow == 17 && b.planes[1].rows == 9)
        let chromaPlaneSize = 17 * 9
        #expect(b.planes[2].baseAddress == b.planes[1].baseAddress + chromaPlaneSize)
        let i420Size = 33 * 17 + 2 * 17 * 9
        let nv12Size = 33 * 17 + 34 * 9
        #expect(b.contiguousBytes?.count == i420Size)
        #expect(PixelFormat.nv12.imageSize(width: 33, height: 17) == nv12Size)
        #expect(PixelFormat.yuyv.imageSize(width: 32, height: 2) == 128)
    }

    @Test func poolReusesItsBuffers() {
        let pool = PixelBufferPool(format: .i420, width: 64, height: 64, capacity: 2)
        let a = pool.take()
        let b = pool.take()
        #expect(a.buffer !== b.buffer)
        let third = pool.tryTake()
        let none: Bool = if case .none = third { true } else { false }
        #expect(none)
        let bufferA = a.buffer
        let addressOfA = a.buffer.planes[0].baseAddress
        _ = consume a
        #expect(pool.freeCount == 1)
        let c = pool.take()
        #expect(c.buffer === bufferA)
        #expect(c.buffer.planes[0].baseAddress == addressOfA)
        _ = consume b
        _ = consume c
        #expect(pool.freeCount == 2)
        #expect(pool.madeCount == 2)
    }

    /// The blocking take runs on a thread of its own: a test never blocks one of the
    /// cooperative pool's threads.
    @Test func takeWaitsForARelease() async {
        let pool = PixelBufferPool(format: .nv12, width: 32, height: 32, capacity: 1)
        let held = Mutex<PixelBufferLease?>(pool.take())
        let first = held.withLock { $0?.buffer }
        let returned = await onOwnThread {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { held.withLock { $0 = nil } }
            return pool.take().buffer
        }
        #expect(returned === first)
        #expect(pool.freeCount == 1)
    }

    @Test func aLeaseRunsTheReleaseHookOnceWhenItEnds() {
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: 64 * 2)
        defer { storage.deallocate() }
        let counter = Counter()
        let plane = PixelPlane(baseAddress: storage, bytesPerRow: 128, rowBytes: 128, rows: 1)
        let b = PixelBuffer(format: .yuyv, width: 64, height: 1, planes: [plane]) { _ in counter.increment() }
        do {
            let lease = PixelBufferLease(handingOut: b)
            #expect(lease.buffer.isLeased)
            #expect(counter.value == 0)
        }
        #expect(!b.isLeased)
        #expect(counter.value == 1)
    }

    /// A lease that unwinds with an error gives its buffer back like any other.
    @Test func aLeaseGoesBackWhenAnErrorUnwindsPastIt() {
        struct Refused: Error {}
        let pool = PixelBufferPool(format: .i420, width: 16, height: 16, capacity: 1)
        func fail(holding lease: consuming PixelBufferLease) throws { throw Refused() }
        #expect(throws: Refused.self) { try fail(holding: pool.take()) }
        #expect(pool.freeCount == 1 && pool.madeCount == 1)
    }
}

private final class Counter: @unchecked Sendable {
    private(set) var value = 0
    func increment() { value += 1 }
}
