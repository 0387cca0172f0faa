import Foundation

/// A first-in first-out queue of at most `capacity` items between two threads, so memory never
/// grows with a backlog. A live producer uses `offer` (never waits: a full queue refuses the
/// item and the producer drops it); a file producer uses `put`, which waits for room.
///
/// `@unchecked Sendable`: every access to the items goes through the condition's lock.
final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    let capacity: Int
    private var items: [Element?]
    private var head = 0
    private var count = 0
    private var closed = false
    private let condition = NSCondition()

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        items = Array(repeating: nil, count: capacity)
    }

    /// Adds `item` if there is room; false if the queue is full or closed.
    func offer(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed, count < capacity else { return false }
        append(item)
        return true
    }

    /// Adds `item`, waiting for room; false if the queue is closed before there is room.
    func put(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !closed && count == capacity { condition.wait() }
        guard !closed else { return false }
        append(item)
        return true
    }

    /// The oldest item, waiting for one; nil once the queue is closed and empty.
    func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while count == 0 && !closed { condition.wait() }
        guard count > 0 else { return nil }
        let item = items[head]
        items[head] = nil
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
        return item
    }

    /// No more items will be added; `take` returns what is left, then nil.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    private func append(_ item: Element) {
        items[(head + count) % capacity] = item
        count += 1
        condition.broadcast()
    }
}
