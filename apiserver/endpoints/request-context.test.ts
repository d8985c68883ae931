// Query booleans are read as Go's strconv.ParseBool reads them.
import t from 'tap'
import { parseBoolean } from './request-context.js'

t.test('booleans in every spelling ParseBool takes, 400 for others', async t => {
  for (const v of ['1', 't', 'T', 'TRUE', 'true', 'True', '']) t.equal(parseBoolean('force', v), true, v)
  for (const v of ['0', 'f', 'F', 'FALSE', 'false', 'False']) t.equal(parseBoolean('force', v), false, v)
  t.equal(parseBoolean('force', null), undefined)
  t.throws(() => parseBoolean('force', 'yes'), { code: 400, message: 'invalid value for force: strconv.ParseBool: parsing "yes": invalid syntax' })
})
