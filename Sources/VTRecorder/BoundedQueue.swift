import Foundation

/// A first-in first-out queue of at most `capacity` items between two threads, so memory never
/// grows with a backlog. Items are moved in and out, never copied (a captured frame owns a
/// buffer lease). A live producer uses `offer` (never waits: a full queue hands the item back
/// and the producer drops it); a file producer uses `put`, which waits for room.
///
/// `@unchecked Sendable`: the queue owns its slots, every access to them goes through the
/// condition's lock, and an item moved out belongs to the thread that took it (`closeAndEmpty`
/// takes every item out of the count under the lock, then lets them go outside it).
final class BoundedQueue<Element: ~Copyable & Sendable>: @unchecked Sendable {
    let capacity: Int
    private let slots: UnsafeMutablePointer<Element>
    private var head = 0
    private var count = 0
    private var closed = false
    /// Producers waiting in `put` for room.
    private var producersWaiting = 0
    private let condition = NSCondition()

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
    }

    deinit {
        for i in 0..<count { (slots + (head + i) % capacity).deinitialize(count: 1) }
        slots.deallocate()
    }

    /// Adds `item` if there is room; hands it back if the queue is full or closed.
    func offer(_ item: consuming Element) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        guard !closed, count < capacity else { return item }
        append(item)
        return nil
    }

    /// Adds `item`, waiting for room; hands it back if the queue is closed before there is room.
    func put(_ item: consuming Element) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while !closed && count == capacity {
            producersWaiting += 1
            condition.broadcast()
            condition.wait()
            producersWaiting -= 1
        }
        guard !closed else { return item }
        append(item)
        return nil
    }

    /// Items in the queue now.
    var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    /// The oldest item, waiting for one; nil once the queue is closed and empty.
    func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while count == 0 && !closed { condition.wait() }
        guard count > 0 else { return nil }
        let item = (slots + head).move()
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
        return item
    }

    /// Waits until a producer is waiting in `put` for room: a consumer that wants to know the
    /// queue was found full (a test handing off between threads without sleeping).
    func waitForBlockedProducer() {
        condition.lock()
        defer { condition.unlock() }
        while producersWaiting == 0 { condition.wait() }
    }

    /// No more items will be added; `take` returns what is left, then nil.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Closes the queue and lets go of every item still in it.
    func closeAndEmpty() {
        condition.lock()
        closed = true
        let held = count
        let first = head
        count = 0
        condition.broadcast()
        condition.unlock()
        // Outside the lock: letting go of a frame gives its buffer back (a driver ioctl).
        for i in 0..<held { (slots + (first + i) % capacity).deinitialize(count: 1) }
    }

    private func append(_ item: consuming Element) {
        (slots + (head + count) % capacity).initialize(to: item)
        count += 1
        condition.broadcast()
    }
}
