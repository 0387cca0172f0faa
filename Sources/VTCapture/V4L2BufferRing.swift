import CV4L2
import Synchronization
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// The driver's memory-mapped capture buffers and the stream over them.
///
/// Shared by the capture thread (DQBUF) and whoever holds a zero-copy frame (QBUF from the
/// release hook, on the encoder thread): every ioctl runs under one lock, and DQBUF never
/// blocks (the device is non-blocking; waiting is done with poll outside the lock).
///
/// Lifetime: the release hooks of leased frames keep the ring alive, so the mappings outlive
/// the source until the last frame is given back; only then are they unmapped and the device
/// closed. STREAMOFF may come earlier (a stop): the mappings stay valid after it.
///
/// `@unchecked Sendable`: all mutable state sits in `state` behind a Mutex (the device is used
/// only under it, or by the capture thread's poll), the mappings never change, and the mapped
/// memory is only read by the holder of a buffer (`Filled`) or of its lease.
final class V4L2BufferRing: @unchecked Sendable {

    struct Mapping {
        let address: UnsafeMutableRawPointer
        let length: Int
    }

    /// One filled buffer, held by userspace until this ends: then it goes back to the driver
    /// (VIDIOC_QBUF), unless a frame leased the buffer itself (`lease`), which gives it back
    /// when that lease ends.
    struct Filled: ~Copyable {
        let index: Int
        let bytesUsed: Int
        let flags: UInt32
        let sequence: UInt32
        /// CLOCK_MONOTONIC, nanoseconds.
        let timestamp: Int64
        /// The ring to give the buffer back to; nil once a lease took it over.
        private var ring: V4L2BufferRing?

        fileprivate init(_ buffer: v4l2_buffer, ring: V4L2BufferRing) {
            index = Int(buffer.index)
            bytesUsed = Int(buffer.bytesused)
            flags = buffer.flags
            sequence = buffer.sequence
            timestamp = Int64(buffer.timestamp.tv_sec) * 1_000_000_000 + Int64(buffer.timestamp.tv_usec) * 1_000
            self.ring = ring
        }

        deinit {
            ring?.requeue(index)
        }

        /// The buffer's bytes, valid while it is held.
        var bytes: UnsafeRawPointer {
            guard let ring else { preconditionFailure("a filled buffer read after it was leased") }
            return UnsafeRawPointer(ring.mappings[index].address)
        }

        /// The driver's buffer handed to a frame without a copy, as `picture` (one of
        /// `pictures(…)`, for this buffer's index); it goes back to the driver when that lease
        /// ends.
        consuming func lease(_ picture: PixelBuffer) -> PixelBufferLease {
            ring?.leased.add(1, ordering: .relaxed)
            ring = nil
            return PixelBufferLease(handingOut: picture)
        }
    }

    private struct State {
        var streaming = false
        /// True for buffers userspace holds (dequeued, not yet given back).
        var held: [Bool]
        /// `close()` was asked for; the mappings go when the last held buffer comes back.
        var closing = false
        var released = false
    }

    let device: V4L2Device
    let mappings: [Mapping]
    private let state: Mutex<State>

    /// REQBUFS (EBUSY here: another program owns the camera), QUERYBUF and mmap each buffer,
    /// and queue them all. Streaming starts with `start()`.
    init(device: V4L2Device, count: Int) throws(CaptureError) {
        self.device = device
        var request = v4l2_requestbuffers()
        request.count = UInt32(count)
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try device.require(vt_VIDIOC_REQBUFS, &request)
        guard request.count >= 2 else {
            Self.freeBuffers(device)
            throw .unsupportedDeviceFormat(path: device.path,
                                           detail: "the driver granted \(request.count) capture buffer(s); at least 2 are needed")
        }
        var mappings: [Mapping] = []
        do throws(CaptureError) {
            for index in 0..<Int(request.count) {
                var buffer = Self.bufferDescriptor(index)
                try device.require(vt_VIDIOC_QUERYBUF, &buffer)
                let length = Int(buffer.length)
                let address: UnsafeMutableRawPointer
                do {
                    address = try systemCall("mmap") {
                        v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, device.fd, Int64(buffer.m.offset))
                    }
                } catch {
                    throw .deviceCall(path: device.path, error)
                }
                mappings.append(Mapping(address: address, length: length))
            }
            for index in mappings.indices {
                var buffer = Self.bufferDescriptor(index)
                try device.require(vt_VIDIOC_QBUF, &buffer)
            }
        } catch {
            Self.unmap(mappings)
            Self.freeBuffers(device)
            throw error
        }
        self.mappings = mappings
        state = Mutex(State(held: Array(repeating: false, count: mappings.count)))
    }

    deinit {
        state.withLock { state in
            stopStreaming(&state)
            release(&state)
        }
    }

    /// Stops the stream and gives everything back to the driver: the mappings, the buffers and
    /// the device. Buffers still leased keep their memory until they are given back; the last
    /// one finishes the job.
    func close() {
        state.withLock { state in
            stopStreaming(&state)
            state.closing = true
            if !state.held.contains(true) { release(&state) }
        }
    }

    private func release(_ state: inout State) {
        guard !state.released else { return }
        state.released = true
        Self.unmap(mappings)
        Self.freeBuffers(device)
        device.close()
    }

    /// VIDIOC_STREAMON.
    func start() throws(CaptureError) {
        try state.withLock { state throws(CaptureError) in
            guard !state.streaming, !state.closing else { return }
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            try device.require(vt_VIDIOC_STREAMON, &type)
            state.streaming = true
        }
    }

    /// Starts a stream the driver has failed (vb2 answers DQBUF with EIO until STREAMOFF)
    /// again: STREAMOFF clears the failure and hands every buffer back, those not leased are
    /// queued again (leased ones go back when they are released), STREAMON. False when the
    /// device refuses any step (it is gone after all); the stream is then stopped.
    func restart() -> Bool {
        state.withLock { state in
            guard state.streaming, !state.closing else { return false }
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            guard device.ioctl(vt_VIDIOC_STREAMOFF, &type) == nil else { return false }
            state.streaming = false
            for index in mappings.indices where !state.held[index] {
                var buffer = Self.bufferDescriptor(index)
                guard device.ioctl(vt_VIDIOC_QBUF, &buffer) == nil else { return false }
            }
            guard device.ioctl(vt_VIDIOC_STREAMON, &type) == nil else { return false }
            state.streaming = true
            return true
        }
    }

    /// VIDIOC_STREAMOFF: the driver lets go of every buffer. Errors are ignored: after an
    /// unplug there is nothing left to stop.
    func stop() {
        state.withLock { stopStreaming(&$0) }
    }

    private func stopStreaming(_ state: inout State) {
        guard state.streaming, !state.released else { return }
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        _ = device.ioctl(vt_VIDIOC_STREAMOFF, &type)
        state.streaming = false
    }

    /// Buffers frames hold without a copy (`Filled.lease`), not yet given back.
    var buffersLeased: Int { leased.load(ordering: .relaxed) }
    private let leased = Atomic<Int>(0)

    /// Buffers the driver has to fill: those userspace does not hold.
    var buffersWithDriver: Int {
        state.withLock { state in state.held.count(where: { !$0 }) }
    }

    /// A filled buffer, or nil when none is ready yet.
    func dequeue() throws(CaptureError) -> Filled? {
        let dequeued = try state.withLock { state throws(CaptureError) -> v4l2_buffer? in
            guard state.streaming else { return nil }
            var buffer = Self.bufferDescriptor(0)
            if let code = device.ioctl(vt_VIDIOC_DQBUF, &buffer) {
                if code == EAGAIN { return nil }
                throw device.error(for: code, request: vt_VIDIOC_DQBUF)
            }
            let index = Int(buffer.index)
            guard mappings.indices.contains(index) else {
                throw .deviceCall(path: device.path, SystemError(call: V4L2Device.call(vt_VIDIOC_DQBUF), errno: EINVAL))
            }
            state.held[index] = true
            return buffer
        }
        return dequeued.map { Filled($0, ring: self) }
    }

    /// One picture per buffer, wrapping the driver's memory as `planes(mapping)` lays it out,
    /// for frames that lease a buffer itself (`Filled.lease`). Each gives its buffer back to
    /// the driver when its lease ends, so a leased frame keeps the ring (and its mappings)
    /// alive until then.
    func pictures(format: PixelFormat, width: Int, height: Int,
                  planes: (UnsafeMutableRawPointer) -> [PixelPlane]) -> [PixelBuffer] {
        mappings.indices.map { index in
            PixelBuffer(format: format, width: width, height: height, planes: planes(mappings[index].address)) { _ in
                self.leased.subtract(1, ordering: .relaxed)
                self.requeue(index)
            }
        }
    }

    /// Gives buffer `index` back to the driver (VIDIOC_QBUF). After a stop or an unplug there
    /// is no stream to give it to; it is simply marked free. Only the end of a `Filled` or of
    /// a lease of one of `pictures(…)` calls it.
    fileprivate func requeue(_ index: Int) {
        state.withLock { state in
            precondition(state.held[index], "V4L2 buffer \(index) given back twice")
            state.held[index] = false
            if state.closing {
                if !state.held.contains(true) { release(&state) }
                return
            }
            guard state.streaming else { return }
            var buffer = Self.bufferDescriptor(index)
            // QBUF fails only when the device is gone or the stream stopped, which the next
            // DQBUF or poll reports; the buffer simply stays with userspace.
            _ = device.ioctl(vt_VIDIOC_QBUF, &buffer)
        }
    }

    private static func bufferDescriptor(_ index: Int) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.index = UInt32(index)
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        return buffer
    }

    private static func unmap(_ mappings: [Mapping]) {
        for mapping in mappings { unmapMemory(mapping.address, length: mapping.length) { v4l2_munmap($0, $1) } }
    }

    /// REQBUFS 0 releases the driver's buffers; errors mean they are gone already.
    private static func freeBuffers(_ device: V4L2Device) {
        guard device.fd >= 0 else { return }
        var request = v4l2_requestbuffers()
        request.count = 0
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        _ = device.ioctl(vt_VIDIOC_REQBUFS, &request)
    }
}
