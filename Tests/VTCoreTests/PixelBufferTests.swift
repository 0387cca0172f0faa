import Dispatch
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
        #expect(a !== b)
        #expect(pool.tryTake() == nil)
        let addressOfA = a.planes[0].baseAddress
        a.release()
        let c = pool.take()
        #expect(c === a)
        #expect(c.planes[0].baseAddress == addressOfA)
        b.release()
        c.release()
        #expect(pool.freeCount == 2)
    }

    /// The blocking take runs on a thread of its own: a test never blocks one of the
    /// cooperative pool's threads.
    @Test func takeWaitsForARelease() async {
        let pool = PixelBufferPool(format: .nv12, width: 32, height: 32, capacity: 1)
        let held = pool.take()
        let returned = await onOwnThread {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { held.release() }
            return pool.take()
        }
        #expect(returned === held)
        returned.release()
        #expect(pool.freeCount == 1)
    }

    @Test func leasedMemoryRunsItsReleaseHook() {
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: 64 * 2)
        defer { storage.deallocate() }
        let counter = Counter()
        let plane = PixelPlane(baseAddress: storage, bytesPerRow: 128, rowBytes: 128, rows: 1)
        let b = PixelBuffer(format: .yuyv, width: 64, height: 1, planes: [plane]) { _ in counter.increment() }
        b.beginLease()
        #expect(b.isLeased)
        b.release()
        #expect(!b.isLeased)
        #expect(counter.value == 1)
    }
}

private final class Counter: @unchecked Sendable {
    private(set) var value = 0
    func increment() { value += 1 }
}
