import t from 'tap'
t.test('adds', async t => { const n: number = 1 + 1; t.equal(n, 2) })
