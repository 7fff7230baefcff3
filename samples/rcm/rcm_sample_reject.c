// SPDX-License-Identifier: GPL-2.0
/*
 * Sample ib_cm consumer: listens on a service id on every RDMA device with
 * only the exported ib_cm API and rejects each connection request with
 * reason 28 (consumer defined) and private data. Loaded with rcm.ko it
 * shows the ib_cm exports, event delivery and the REJ on the wire; the
 * kselftest rcm_cm_wire.sh drives it.
 *
 *   modprobe rcm_sample_reject service_id=0x1061c20 [mra=1]
 *
 * With mra=1 each REQ is first acknowledged with an MRA. A SIDR_REQ for
 * the service (a UDP port-space id such as 0x1111c06, udaddy's port 7174)
 * is answered with a SIDR_REP of status "reject".
 *
 * (0x1061c20 is the rdma_cm service id of TCP port 7200, so
 * `rping -c -a <this host> -p 7200` reaches it.)
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>

static ulong service_id = 0x1061c20;
module_param(service_id, ulong, 0444);
MODULE_PARM_DESC(service_id, "service id to listen on (host order)");

static bool mra;
module_param(mra, bool, 0444);
MODULE_PARM_DESC(mra, "acknowledge each REQ with an MRA before rejecting it");

static const char reject_data[] = "rcm sample: not today";
static const char mra_data[] = "rcm sample: thinking";
static atomic_t rejected = ATOMIC_INIT(0);

static struct ib_client sample_client;

static int sample_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	int ret;

	if (ev->event == IB_CM_SIDR_REQ_RECEIVED) {
		struct ib_cm_sidr_rep_param rep = {
			.status = IB_SIDR_REJECT,
			.private_data = reject_data,
			.private_data_len = sizeof(reject_data),
		};

		ret = ib_send_cm_sidr_rep(id, &rep);
		pr_info("rcm_sample: SIDR_REQ for %#llx (port %u) answered: reject (%d)\n",
			be64_to_cpu(ev->param.sidr_req_rcvd.service_id),
			ev->param.sidr_req_rcvd.port, ret);
		return 1;
	}
	if (ev->event != IB_CM_REQ_RECEIVED)
		return 0;
	if (mra) {
		/* service timeout 20: about 4 s */
		ret = ib_send_cm_mra(id, 20, mra_data, sizeof(mra_data));
		pr_info("rcm_sample: MRA sent (%d)\n", ret);
	}
	ret = ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			     reject_data, sizeof(reject_data));
	pr_info("rcm_sample: REQ for %#llx from QP %#x (listener %p, port %u): %s (%d), %d rejected\n",
		be64_to_cpu(id->service_id), req->remote_qpn, req->listen_id,
		req->port, ibcm_reject_msg(IB_CM_REJ_CONSUMER_DEFINED), ret,
		atomic_inc_return(&rejected));
	/* Non-zero: the CM destroys the new id for us. */
	return 1;
}

static int sample_add(struct ib_device *device)
{
	struct ib_cm_id *id;
	int ret;

	id = ib_create_cm_id(device, sample_handler, NULL);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = ib_cm_listen(id, cpu_to_be64(service_id));
	if (ret) {
		ib_destroy_cm_id(id);
		return ret;
	}
	ib_set_client_data(device, &sample_client, id);
	pr_info("rcm_sample: %s: listening on %#lx\n", dev_name(&device->dev),
		service_id);
	return 0;
}

static void sample_remove(struct ib_device *device, void *data)
{
	ib_destroy_cm_id(data);
	pr_info("rcm_sample: %s: stopped\n", dev_name(&device->dev));
}

static struct ib_client sample_client = {
	.name = "rcm_sample_reject",
	.add = sample_add,
	.remove = sample_remove,
};

static int __init sample_init(void)
{
	return ib_register_client(&sample_client);
}

static void __exit sample_exit(void)
{
	ib_unregister_client(&sample_client);
}

module_init(sample_init);
module_exit(sample_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rcm sample: an ib_cm consumer that rejects every REQ");
