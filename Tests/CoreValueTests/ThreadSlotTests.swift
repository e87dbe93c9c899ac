import Foundation
import Testing

import CoreValue

/// `ThreadSlot` and `ThreadCounter`, where the library keeps values per thread: what one thread puts there
/// no other thread sees, and a scoped object is taken back when its scope ends.
@Suite struct ThreadSlotTests {
    final class Marker: Sendable {}

    @Test func aScopedObjectIsThisThreadsAloneAndGoesWithItsScope() throws {
        let slot = ThreadSlot<Marker>()
        #expect(slot.isAvailable)
        let outer = Marker()
        let inner = Marker()
        #expect(slot.object == nil)
        slot.withObject(outer) {
            #expect(slot.object === outer)
            #expect(slot.holds(outer))
            slot.withObject(inner) {
                #expect(slot.object === inner)
                #expect(!slot.holds(outer))
            }
            #expect(slot.object === outer)
            // Another thread sees its own, empty slot.
            let seen = DispatchSemaphore(value: 0)
            let elsewhere = Box()
            Thread {
                elsewhere.wasEmpty = slot.object == nil && !slot.holds(outer)
                seen.signal()
            }.start()
            seen.wait()
            #expect(elsewhere.wasEmpty)
        }
        #expect(slot.object == nil)
    }

    @Test func aThreadsOwnObjectStaysForTheThread() {
        let slot = ThreadSlot<Marker>()
        let marker = Marker()
        let checked = DispatchSemaphore(value: 0)
        let result = Box()
        Thread {
            slot.setForThisThread(marker)
            result.wasEmpty = slot.holds(marker) && slot.object === marker
            checked.signal()
        }.start()
        checked.wait()
        #expect(result.wasEmpty)
        #expect(!slot.holds(marker))
    }

    @Test func aCounterCountsPerThread() {
        let counter = ThreadCounter()
        #expect(counter.value == 0)
        counter.value = 3
        let checked = DispatchSemaphore(value: 0)
        let result = Box()
        Thread {
            counter.value = 7
            result.count = counter.value
            checked.signal()
        }.start()
        checked.wait()
        #expect(result.count == 7)
        #expect(counter.value == 3)
        counter.value = 0
    }

    /// What another thread saw, handed back after a semaphore.
    final class Box: @unchecked Sendable {
        // @unchecked: written by one thread before it signals, read by the other after it waited.
        var wasEmpty = false
        var count = 0
    }
}
